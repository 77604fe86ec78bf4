/**
 * Fetches the database named by the export manifest to local disk, with the runner files the
 * exporter built for it (the lookups' index and page files, when the export has them), and verifies
 * each (DECISIONS §7: the manifest holds each file's sha256). A file that does not match is
 * deleted with its version's folder, never opened.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { MANIFEST_KEY, manifestSchema } from '@uda/shared/manifest';
import type { ExportFile, Manifest, RunnerFile } from '@uda/shared/manifest';
import type { ObjectStore } from '@uda/shared/object-store';

export const DATABASE_NAME = 'service.db';
const RUNNER_PREFIX = 'runner/';

export async function readManifest(store: ObjectStore): Promise<Manifest | undefined> {
  const object = await store.get(MANIFEST_KEY);
  if (!object) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of object.body) chunks.push(Buffer.from(chunk as Uint8Array));
  return manifestSchema.parse(JSON.parse(Buffer.concat(chunks).toString('utf8')));
}

export function databaseEntry(manifest: Manifest): ExportFile | undefined {
  return manifest.files.find((f) => f.kind === 'database' && f.name === DATABASE_NAME);
}

/** The object `entry.key` into `<folder>/<fileName>`, through a `.part` file renamed once its sha256 matches. */
async function downloadFile(store: ObjectStore, entry: { key: string; sha256: string }, folder: string, fileName: string): Promise<string> {
  const partial = join(folder, `${fileName}.part`);
  const object = await store.get(entry.key);
  if (!object) throw new Error(`manifest names ${entry.key}, which does not exist`);
  const hash = createHash('sha256');
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  await pipeline(object.body, hashing, createWriteStream(partial));
  const digest = hash.digest('hex');
  if (digest !== entry.sha256) throw new Error(`sha256 mismatch for ${entry.key}: expected ${entry.sha256}, got ${digest}`);
  const path = join(folder, fileName);
  await rename(partial, path);
  return path;
}

/** A runner file is saved under its name after `runner/`, which the manifest's schema limits to a plain file name. */
function localName(file: RunnerFile): string {
  return file.name.slice(RUNNER_PREFIX.length);
}

/**
 * Downloads to `<dir>/<version>/service.db` (the file name makes the catalog `service`) and the
 * version's runner files beside it, all at once; returns the database's path.
 */
export async function downloadDatabase(store: ObjectStore, entry: ExportFile, manifest: Manifest, dir: string): Promise<string> {
  const folder = join(dir, manifest.version);
  await mkdir(folder, { recursive: true });
  try {
    const runnerFiles = (manifest.runner_files ?? []).map((file) => downloadFile(store, file, folder, localName(file)));
    // Every download settles before a failure removes the folder, so none writes into it afterwards.
    const [database, ...rest] = await Promise.allSettled([downloadFile(store, entry, folder, DATABASE_NAME), ...runnerFiles]);
    const failed = [database, ...rest].find((result) => result?.status === 'rejected');
    if (failed) throw failed.reason;
    return (database as PromiseFulfilledResult<string>).value;
  } catch (error) {
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
}
