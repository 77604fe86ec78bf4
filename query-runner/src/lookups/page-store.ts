/**
 * The version's page files (`pages-{source}.jsonl`, rendered by `@uda/search/index` from the
 * page SQL, by the exporter or, for an older export, when the version is opened), open for reading
 * rows at the offsets kept per document. The files lie in the version's folder, which is deleted
 * with the version.
 */
import { readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { pagesFileName, type PageOffsets, type StoredLookupSource } from '@uda/search/index';

export interface PageStore extends PageOffsets {
  readonly file: FileHandle;
}

/** The page file of `source` in `dir`, with its rows' offsets. */
export async function openPageStore(dir: string, source: StoredLookupSource, offsets: PageOffsets): Promise<PageStore> {
  const file = await open(join(dir, pagesFileName(source)), 'r');
  return { ...offsets, file };
}

/**
 * The rows of `docs`, in their order, as the bytes of a JSON array: each row's stored JSON text is
 * copied in as it is, never parsed and serialised again. Reads are synchronous: a read of a few
 * hundred bytes from the page cache costs microseconds, less than a trip through libuv's thread
 * pool and a promise per row.
 */
export function readPageJson(store: PageStore, docs: readonly number[]): Buffer {
  const rows: [start: number, length: number][] = [];
  for (const doc of docs) {
    const start = store.starts[doc] ?? -1;
    if (start < 0) continue;
    rows.push([start, store.lengths[doc]!], ...(store.more.get(doc) ?? []));
  }
  const bytes = rows.reduce((sum, [, length]) => sum + length + 1, 1);
  const out = Buffer.allocUnsafe(Math.max(2, bytes));
  let at = 0;
  out[at++] = 0x5b; // [
  rows.forEach(([start, length], i) => {
    if (i > 0) out[at++] = 0x2c; // ,
    at += readSync(store.file.fd, out, at, length, start);
  });
  out[at++] = 0x5d; // ]
  return out.subarray(0, at);
}

export async function closePageStore(store: PageStore): Promise<void> {
  await store.file.close();
}
