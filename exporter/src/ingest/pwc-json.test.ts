/**
 * The Papers with Code arrays read by DuckDB's `read_json`, through the real build path (`loadTable`
 * into a real DuckDB): gzipped as published, and a bad item failing the build with its number.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadTableAlone } from '../../test/load-table.ts';
import { pwcTables } from './pwc.ts';
import type { TableSpec } from './table-spec.ts';

const DATA = join(import.meta.dirname, '..', '..', 'data');
const PAPERS = 'pwc/papers-with-abstracts.json';
let scratch: string;
let papers: Record<string, unknown>[];

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'uda-pwc-json-'));
  papers = JSON.parse(await readFile(join(DATA, PAPERS), 'utf8')) as Record<string, unknown>[];
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** An input folder named `name` whose papers file is `content` (at `file`, e.g. gzipped). */
async function inputWith(name: string, content: string | Buffer, file = PAPERS): Promise<string> {
  const dir = join(scratch, name);
  await mkdir(join(dir, 'pwc'), { recursive: true });
  await writeFile(join(dir, file), content);
  return dir;
}

function build(table: TableSpec): Promise<number> {
  return loadTableAlone(table, scratch);
}

describe('papers-with-abstracts.json through read_json', () => {
  it('reads the gzipped file as published, every paper', async () => {
    const dir = await inputWith('gzipped', gzipSync(JSON.stringify(papers)), `${PAPERS}.gz`);
    expect(await build(pwcTables(dir)[0]!)).toBe(papers.length);
  });

  it('a number where the title belongs fails the build, naming the item', async () => {
    const broken = papers.map((paper, i) => (i === 3 ? { ...paper, title: 5 } : paper));
    const dir = await inputWith('number-title', JSON.stringify(broken, null, 2));
    await expect(build(pwcTables(dir)[0]!)).rejects.toThrow('pwc/papers-with-abstracts.json: item 3: title is not a string: 5');
  });

  it('an author list holding a non-string fails the build, naming the item', async () => {
    const broken = papers.map((paper, i) => (i === 1 ? { ...paper, authors: ['Ada', 7] } : paper));
    const dir = await inputWith('author-number', JSON.stringify(broken));
    await expect(build(pwcTables(dir)[0]!)).rejects.toThrow('pwc/papers-with-abstracts.json: item 1: authors is not a list of strings: ["Ada",7]');
  });

  it('a file cut short is invalid JSON', async () => {
    const dir = await inputWith('cut', JSON.stringify(papers).slice(0, 500));
    await expect(build(pwcTables(dir)[0]!)).rejects.toThrow(/^pwc\/papers-with-abstracts\.json: invalid JSON/);
  });

  it('a missing file names both names it looked for', async () => {
    const dir = await inputWith('missing', '[]', 'pwc/other.json');
    await expect(build(pwcTables(dir)[0]!)).rejects.toThrow('pwc/papers-with-abstracts.json: file not found (plain or .gz)');
  });
});
