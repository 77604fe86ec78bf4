/**
 * Copies one whole object version from the store into a file: the cache's fills without a client
 * (range-read fills, the warm-up), in this thread or in the warm-up's worker (`copy-worker.ts`).
 */
import { pipeline } from 'node:stream/promises';
import type { ObjectStore } from '@uda/shared/object-store';
import { PooledFileWriter } from './pooled-file-writer.ts';

/** Writes the object `info` names (key and ETag) to the new file `path`; rejects when it is gone, changed or cut. */
export type CopyObject = (info: { readonly key: string; readonly etag: string }, path: string, signal?: AbortSignal) => Promise<void>;

export async function copyObject(store: ObjectStore, info: { readonly key: string; readonly etag: string }, path: string, signal?: AbortSignal): Promise<void> {
  const object = await store.get(info.key);
  if (!object) throw new Error(`${info.key} is gone from the object store`);
  // Only the version the cache entry is named after may become its file.
  if (object.etag !== info.etag) {
    object.body.destroy();
    throw new Error(`${info.key} changed in the object store`);
  }
  await pipeline(object.body, new PooledFileWriter(path), signal ? { signal } : {});
}
