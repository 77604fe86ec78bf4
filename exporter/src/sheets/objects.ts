/**
 * Where a sheet's objects live, and moving them between the object store and the job's folder.
 * Keys: `sheets/<account>/<id>/<version>.parquet` (DECISIONS §8).
 */
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { ObjectStore } from '@uda/shared/object-store';
import { megabytes, SheetIngestError } from './errors.ts';

export function sheetPrefix(accountId: string, id: string): string {
  return `sheets/${encodeURIComponent(accountId)}/${id}/`;
}

export function parquetKey(accountId: string, id: string, version: number): string {
  return `${sheetPrefix(accountId, id)}${version}.parquet`;
}

/** Downloads the raw upload; its size is checked first so an oversized object is never fetched. */
export async function downloadUpload(store: ObjectStore, key: string, path: string, maxBytes: number): Promise<void> {
  const info = await store.head(key);
  if (!info) throw new SheetIngestError('The uploaded file could not be found. Upload it again.');
  if (info.size > maxBytes) throw new SheetIngestError(`The file is larger than the ${megabytes(maxBytes)} limit.`);
  const object = await store.get(key);
  if (!object) throw new SheetIngestError('The uploaded file could not be found. Upload it again.');
  await pipeline(object.body, createWriteStream(path));
}

/**
 * Removes the Parquet of versions older than `version`. Only `<n>.parquet` keys are touched, so
 * anything else the API keeps under the sheet's prefix (its raw uploads) is left alone.
 */
export async function deleteOlderVersions(store: ObjectStore, accountId: string, id: string, version: number): Promise<string[]> {
  const prefix = sheetPrefix(accountId, id);
  const old = (await store.list(prefix))
    .map((object) => object.key)
    .filter((key) => {
      const match = /^(\d+)\.parquet$/.exec(key.slice(prefix.length));
      return match !== null && Number(match[1]) < version;
    });
  if (old.length > 0) await store.delete(old);
  return old;
}
