/**
 * The cache's file writer on a real folder: whatever the chunking, the file holds exactly the bytes
 * written, and it refuses to overwrite an existing file.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from '@jest/globals';
import { BLOCK_BYTES, PooledFileWriter } from './pooled-file-writer.ts';

/** Splits `bytes` into chunks of the given sizes, cycling through them. */
function chunked(bytes: Buffer, sizes: readonly number[]): Buffer[] {
  const chunks: Buffer[] = [];
  for (let offset = 0, i = 0; offset < bytes.length; i++) {
    const size = sizes[i % sizes.length]!;
    chunks.push(bytes.subarray(offset, offset + size));
    offset += size;
  }
  return chunks;
}

describe('PooledFileWriter', () => {
  it.each([
    ['empty', 0, [1]],
    ['under one block', 1000, [7]],
    ['exactly two blocks in socket-sized chunks', 2 * BLOCK_BYTES, [64 * 1024]],
    ['several blocks in odd chunks, some larger than a block', 5 * BLOCK_BYTES + 12_345, [65_521, 3 * BLOCK_BYTES + 1, 1]],
  ])('writes %s byte for byte', async (_name, size, sizes) => {
    const bytes = randomBytes(size);
    const path = join(await mkdtemp(join(tmpdir(), 'uda-pooled-')), 'file');
    const writer = new PooledFileWriter(path);
    await pipeline(Readable.from(chunked(bytes, sizes)), writer);
    expect(writer.bytesWritten).toBe(size);
    expect((await readFile(path)).equals(bytes)).toBe(true);
  });

  it('fails, and leaves the existing file alone, when the file exists already', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'uda-pooled-')), 'file');
    await writeFile(path, 'kept');
    await expect(pipeline(Readable.from([randomBytes(10)]), new PooledFileWriter(path))).rejects.toThrow(/EEXIST/);
    expect(await readFile(path, 'utf8')).toBe('kept');
  });
});
