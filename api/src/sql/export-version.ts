/**
 * The current export manifest, read from the object store (DECISIONS §7). The SQL routes need its
 * version for the query id; the export routes need its file list. A short per-process cache keeps
 * the store out of the hot path; the exporter swaps the manifest rarely, and a query id computed
 * against a manifest a second old only means the runner may still answer from the previous data.
 */
import { MANIFEST_KEY, type Manifest, manifestSchema, versionManifestKey } from '@uda/shared/manifest';
import type { ObjectStore } from '@uda/shared/object-store';

const TTL_MS = 1_000;

/**
 * The export manifests of one store, the current one cached for a second. Built once by the
 * composition root (`services.ts`) and passed to the routes that need it.
 */
export class Manifests {
  readonly #store: ObjectStore;
  readonly #ttlMs: number;
  readonly #now: () => number;
  #cached: { at: number; manifest: Promise<Manifest | undefined> } | undefined;

  constructor(store: ObjectStore, options: { ttlMs?: number; now?: () => number } = {}) {
    this.#store = store;
    this.#ttlMs = options.ttlMs ?? TTL_MS;
    this.#now = options.now ?? Date.now;
  }

  /** The current manifest, or undefined when no export was ever built. Store failures reject. */
  current(): Promise<Manifest | undefined> {
    const hit = this.#cached;
    if (hit && this.#now() - hit.at < this.#ttlMs) return hit.manifest;
    const cached = { at: this.#now(), manifest: readManifest(this.#store, MANIFEST_KEY) };
    this.#cached = cached;
    // A failed read must not stick for the TTL.
    cached.manifest.catch(() => {
      if (this.#cached === cached) this.#cached = undefined;
    });
    return cached.manifest;
  }

  /** A kept version's own manifest (`exports/<version>/manifest.json`), or undefined when not kept. */
  version(version: string): Promise<Manifest | undefined> {
    return readManifest(this.#store, versionManifestKey(version));
  }

  /** The export version that goes into the query id; `none` before the first export. */
  async exportVersion(): Promise<string> {
    return (await this.current())?.version ?? 'none';
  }
}

async function readManifest(store: ObjectStore, key: string): Promise<Manifest | undefined> {
  const object = await store.get(key);
  if (!object) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of object.body) chunks.push(chunk as Buffer);
  return manifestSchema.parse(JSON.parse(Buffer.concat(chunks).toString('utf8')));
}
