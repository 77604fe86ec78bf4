/**
 * Fetches the database named by the export manifest to local disk and verifies it (DECISIONS §7:
 * the manifest holds each file's sha256). A file that does not match is deleted, never opened.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { MANIFEST_KEY, manifestSchema } from '@uda/shared/manifest';
import type { ExportFile, Manifest } from '@uda/shared/manifest';
import type { ObjectStore } from '@uda/shared/object-store';

export const DATABASE_NAME = 'service.db';

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

/** Downloads to `<dir>/<version>/service.db` (the file name makes the catalog `service`). */
export async function downloadDatabase(store: ObjectStore, entry: ExportFile, version: string, dir: string): Promise<string> {
  const folder = join(dir, version);
  await mkdir(folder, { recursive: true });
  const partial = join(folder, `${DATABASE_NAME}.part`);
  const object = await store.get(entry.key);
  if (!object) throw new Error(`manifest names ${entry.key}, which does not exist`);
  const hash = createHash('sha256');
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  try {
    await pipeline(object.body, hashing, createWriteStream(partial));
    const digest = hash.digest('hex');
    if (digest !== entry.sha256) throw new Error(`sha256 mismatch for ${entry.key}: expected ${entry.sha256}, got ${digest}`);
    const path = join(folder, DATABASE_NAME);
    await rename(partial, path);
    return path;
  } catch (error) {
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
}
