/**
 * The API warms its object cache when a new export version is published: a real export, the real
 * S3-compatible server behind a proxy that records every object GET (`api/test/support/s3-proxy.ts`),
 * the real export routes over HTTP. After a publish, the first download of a warmed file reads no
 * byte from S3; the most downloaded files are copied first; closing the API cancels the copies.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MANIFEST_KEY, type Manifest, manifestSchema, newVersion, versionManifestKey, versionPrefix } from '@uda/shared/manifest';
import type { ObjectStore } from '@uda/shared/object-store';
import { reader } from '@uda/test-support/metrics';
import { openStack, type Stack } from '@uda/test-support/sql-stack';
import { type S3Proxy, startS3Proxy } from '../../test/support/s3-proxy.ts';

let stack: Stack;
let proxy: S3Proxy;
beforeAll(async () => {
  stack = await openStack('exportsWarm');
  proxy = await startS3Proxy(stack.bucket.env.S3_ENDPOINT!, stack.bucket.bucket);
}, 120_000);
afterAll(async () => {
  await proxy.close();
  await stack.close();
});

const GUTENBERG = 'tables/gutenberg.parquet';
const CENSUS = 'tables/census_states.csv';

/** The API talks to S3 through the proxy, warms with one copy at a time and polls often. */
async function warmingConfig(): Promise<{ config: Record<string, string>; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'uda-warm-api-'));
  return { dir, config: { S3_ENDPOINT: proxy.endpoint, OBJECT_CACHE_WARM_CONCURRENCY: '1', OBJECT_CACHE_WARM_POLL_MS: '100', OBJECT_CACHE_DIR: dir } };
}

async function bytesOf(store: ObjectStore, key: string): Promise<Buffer> {
  const object = await store.get(key);
  if (!object) throw new Error(`${key} missing`);
  const chunks: Buffer[] = [];
  for await (const chunk of object.body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function currentManifest(): Promise<Manifest> {
  return manifestSchema.parse(JSON.parse((await bytesOf(stack.bucket.store, MANIFEST_KEY)).toString('utf8')));
}

/** Publishes a new version, as the exporter does: `names` get new objects (the same bytes), the rest keep theirs. */
async function publishCopying(from: Manifest, names: readonly string[]): Promise<Manifest> {
  const store = stack.bucket.store;
  const version = newVersion(new Date(), randomBytes(3).toString('hex'));
  const files = [];
  for (const file of from.files) {
    if (!names.includes(file.name)) {
      files.push(file);
      continue;
    }
    const info = await store.putBytes(`${versionPrefix(version)}${file.name}`, await bytesOf(store, file.key), { contentType: file.content_type });
    files.push({ ...file, key: info.key, etag: info.etag });
  }
  const manifest = manifestSchema.parse({ ...from, version, built_at: new Date().toISOString(), files });
  await store.putBytes(versionManifestKey(version), JSON.stringify(manifest), { contentType: 'application/json' });
  await store.putBytes(MANIFEST_KEY, JSON.stringify(manifest), { contentType: 'application/json' });
  return manifest;
}

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((r) => setTimeout(r, 20));
}

describe('warming the object cache after a publish', () => {
  it('copies the new version in, most downloaded first; its first downloads read no byte from S3', async () => {
    const { config } = await warmingConfig();
    const api = await stack.start({ config });
    const warmer = api.services.cacheWarmer;
    const value = reader(api.services.metrics.registry);
    const first = await currentManifest();
    await until(() => warmer.lastRound?.version === first.version);
    const warmedBefore = await value('uda_object_cache_warmed_total');
    const bytesBefore = await value('uda_object_cache_warmed_bytes_total');
    expect(warmedBefore).toBe(warmer.lastRound!.warmed.length);

    // Downloads on this pod: gutenberg's Parquet twice, census's CSV once.
    const { apiKey } = await api.account({ tier: 'developer' });
    for (const path of ['gutenberg?format=parquet', 'gutenberg?format=parquet', 'census']) {
      expect((await api.get(`/api/v1/export/${path}`, { key: apiKey })).status).toBe(200);
    }
    const published = await publishCopying(first, [CENSUS, GUTENBERG]);
    await until(() => warmer.lastRound?.version === published.version);
    expect(warmer.lastRound!.warmed).toEqual([GUTENBERG, CENSUS]);
    const keys = [GUTENBERG, CENSUS].map((name) => published.files.find((f) => f.name === name)!.key);
    expect(proxy.gets.filter((key) => keys.includes(key))).toEqual(keys);
    expect(await value('uda_object_cache_warmed_total')).toBe(warmedBefore + 2);
    const sizes = published.files.filter((f) => keys.includes(f.key)).reduce((sum, f) => sum + f.size, 0);
    expect(await value('uda_object_cache_warmed_bytes_total')).toBe(bytesBefore + sizes);

    for (const [path, key] of [['gutenberg?format=parquet', keys[0]!], ['census', keys[1]!]] as const) {
      const res = await api.get(`/api/v1/export/${path}`, { key: apiKey });
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer()).equals(await bytesOf(stack.bucket.store, key))).toBe(true);
    }
    // Only the warm-up's two GETs: the downloads came from the pod's disk.
    expect(proxy.gets.filter((key) => keys.includes(key))).toEqual(keys);
    expect(await value('uda_object_cache_lookups_total', { outcome: 'miss' })).toBe(0);
    await api.close();
  });

  it('closing the API cancels the copy in flight and leaves no partial file', async () => {
    const { config, dir } = await warmingConfig();
    proxy.delayMs = 50;
    try {
      const api = await stack.start({ config });
      await until(async () => (await readdir(dir)).some((name) => name.startsWith('.fill-')));
      await api.close();
      expect(api.services.cacheWarmer.lastRound).toBeUndefined();
    } finally {
      proxy.delayMs = 0;
    }
    expect((await readdir(dir)).filter((name) => name.startsWith('.fill-'))).toEqual([]);
  });
});
