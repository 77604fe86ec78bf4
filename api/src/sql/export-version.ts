/**
 * The current export manifest, read from the object store (DECISIONS §7). The SQL routes need its
 * version for the query id; the export routes need its file list. A short per-process cache keeps
 * the store out of the hot path; the exporter swaps the manifest rarely, and a query id computed
 * against a manifest a second old only means the runner may still answer from the previous data.
 */
import { MANIFEST_KEY, type Manifest, manifestSchema, versionManifestKey } from '@uda/shared/manifest';
import type { ObjectStore } from '@uda/shared/object-store';

const TTL_MS = 1_000;
const cache = new WeakMap<ObjectStore, { at: number; manifest: Promise<Manifest | undefined> }>();

/** The current manifest, or undefined when no export was ever built. Store failures reject. */
export function currentManifest(store: ObjectStore): Promise<Manifest | undefined> {
  const hit = cache.get(store);
  if (hit && Date.now() - hit.at < TTL_MS) return hit.manifest;
  const manifest = readManifest(store, MANIFEST_KEY);
  cache.set(store, { at: Date.now(), manifest });
  // A failed read must not stick for the TTL.
  manifest.catch(() => cache.delete(store));
  return manifest;
}

/** A kept version's own manifest (`exports/<version>/manifest.json`), or undefined when not kept. */
export function versionManifest(store: ObjectStore, version: string): Promise<Manifest | undefined> {
  return readManifest(store, versionManifestKey(version));
}

/** The export version that goes into the query id; `none` before the first export. */
export async function exportVersionOf(store: ObjectStore): Promise<string> {
  return (await currentManifest(store))?.version ?? 'none';
}

async function readManifest(store: ObjectStore, key: string): Promise<Manifest | undefined> {
  const object = await store.get(key);
  if (!object) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of object.body) chunks.push(chunk as Buffer);
  return manifestSchema.parse(JSON.parse(Buffer.concat(chunks).toString('utf8')));
}
