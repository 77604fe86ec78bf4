/**
 * The version's page files (`pages-{source}.jsonl`, rendered by `@uda/shared/search-index` from the
 * page SQL, by the exporter or, for an older export, when the version is opened), open for reading
 * rows at the offsets kept per document. The files lie in the version's folder, which is deleted
 * with the version.
 */
import { readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { pagesFileName, type PageOffsets, type StoredLookupSource } from '@uda/shared/search-index';

export interface PageStore extends PageOffsets {
  readonly file: FileHandle;
}

/** The page file of `source` in `dir`, with its rows' offsets. */
export async function openPageStore(dir: string, source: StoredLookupSource, offsets: PageOffsets): Promise<PageStore> {
  const file = await open(join(dir, pagesFileName(source)), 'r');
  return { ...offsets, file };
}

/**
 * One row, read synchronously: a read of a few hundred bytes from the page cache costs
 * microseconds, less than a trip through libuv's thread pool and a promise per row.
 */
function readRow(store: PageStore, start: number, length: number): Record<string, unknown> {
  const buffer = Buffer.allocUnsafe(length);
  readSync(store.file.fd, buffer, 0, length, start);
  return JSON.parse(buffer.toString('utf8')) as Record<string, unknown>;
}

/** The rows of `docs`, in their order. */
export function readPage(store: PageStore, docs: readonly number[]): Record<string, unknown>[] {
  return docs.flatMap((doc) => {
    const start = store.starts[doc] ?? -1;
    if (start < 0) return [];
    const further = store.more.get(doc) ?? [];
    return [readRow(store, start, store.lengths[doc]!), ...further.map(([s, l]) => readRow(store, s, l))];
  });
}

export async function closePageStore(store: PageStore): Promise<void> {
  await store.file.close();
}
