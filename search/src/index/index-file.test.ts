/**
 * `search-index.bin` gives back the arrays it was written with, refuses a damaged file with a
 * clear error, and answers undefined for a file of another format version (the runner then builds
 * the index from the database).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { INDEX_FORMAT_VERSION, readIndexFile, writeIndexFile, type SourceFiles } from './index-file.ts';
import type { StoredLookupSource } from './page-sql.ts';
import { SortedTextsBuilder, textAt, type SortedTexts } from './sorted-texts.ts';
import type { SourceIndex } from './source-index.ts';
import { withPostingExtras } from './posting-extras.ts';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'uda-index-file-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function texts(entries: string[]): SortedTexts {
  const builder = new SortedTextsBuilder(entries.length, 64);
  for (const entry of entries) builder.append(entry);
  return builder.finish();
}

/** A two-document index: "war" in both, "art" (stem `art`) and "arts" in the first, "kraków" in the second. */
function smallSource(): SourceFiles {
  const index: SourceIndex = withPostingExtras({
    documents: 2,
    terms: texts(['art', 'arts', 'kraków', 'war']),
    postingEnds: Uint32Array.of(1, 2, 3, 5),
    postingDocs: Int32Array.of(1, 1, 2, 1, 2),
    postingTf: Float32Array.of(1, 0.5, 1.5, 1, 2),
    postingPrimary: Uint8Array.of(1, 0, 1, 1, 1),
    norms: Float64Array.of(0, 0.75, 1.25),
    idTerms: Uint8Array.of(0, 0, 0, 0),
    stems: texts(['art', 'kraków', 'war']),
    stemEnds: Uint32Array.of(2, 3, 4),
    stemTerms: Int32Array.of(0, 1, 2, 3),
    titles: texts(['art of war', 'kraków']),
    titleDocs: Int32Array.of(1, 2),
  });
  const pages = { starts: Float64Array.of(-1, 0, 20), lengths: Uint32Array.of(0, 19, 7), more: new Map([[2, [[28, 9] as [number, number]]]]) };
  return { index, pages };
}

async function written(name: string): Promise<string> {
  const path = join(dir, name);
  await writeIndexFile(path, new Map<StoredLookupSource, SourceFiles>([['gutenberg', smallSource()], ['food', smallSource()]]));
  return path;
}

describe('search-index.bin', () => {
  it('reads back every array, text and page offset it was written with', async () => {
    const read = (await readIndexFile(await written('round-trip.bin')))!;
    expect([...read.keys()]).toEqual(['gutenberg', 'food']);
    const { index, pages } = read.get('food')!;
    const expected = smallSource();
    expect({ ...index, terms: undefined, stems: undefined, titles: undefined }).toEqual({ ...expected.index, terms: undefined, stems: undefined, titles: undefined });
    expect([0, 1, 2, 3].map((i) => textAt(index.terms, i))).toEqual(['art', 'arts', 'kraków', 'war']);
    expect(textAt(index.titles, 0)).toBe('art of war');
    expect(pages).toEqual(expected.pages);
    // One SharedArrayBuffer under every array: the ranking threads read the one copy.
    expect(index.postingDocs.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(index.terms.bytes.buffer).toBe(index.postingDocs.buffer);
  });

  it('answers undefined for another format version, so the runner builds the index itself', async () => {
    const path = await written('other-version.bin');
    const bytes = await readFile(path);
    bytes.writeUInt32LE(INDEX_FORMAT_VERSION + 1, 8);
    bytes.writeUInt32LE(INDEX_FORMAT_VERSION + 1, bytes.length - 4);
    await writeFile(path, bytes);
    await expect(readIndexFile(path)).resolves.toBeUndefined();
  });

  it('refuses a file that is not one', async () => {
    const path = join(dir, 'not-an-index.bin');
    await writeFile(path, Buffer.alloc(64, 7));
    await expect(readIndexFile(path)).rejects.toThrow('does not start with its magic bytes');
  });

  it('refuses a truncated file', async () => {
    const path = await written('truncated.bin');
    const bytes = await readFile(path);
    await writeFile(path, bytes.subarray(0, bytes.length - 40));
    await expect(readIndexFile(path)).rejects.toThrow(/trailer does not match|table of contents/);
  });

  it('refuses arrays whose lengths disagree', async () => {
    const broken = smallSource();
    const path = join(dir, 'disagree.bin');
    await writeIndexFile(path, new Map([['gutenberg', { ...broken, index: { ...broken.index, postingTf: Float32Array.of(1, 2) } }]]));
    await expect(readIndexFile(path)).rejects.toThrow('the arrays of gutenberg disagree in length');
  });
});
