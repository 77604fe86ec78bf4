/**
 * The warm-up of the pod disk cache, against the real S3-compatible server behind a proxy that
 * records every object GET (`test/s3-proxy.ts`), with a real cache folder and real HTTP downloads
 * through sendObject: what it copies, in which order, within which bound, and what a cancelled,
 * broken or concurrent copy leaves on disk.
 */
import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { type Manifest, manifestSchema, newVersion, versionPrefix } from '@uda/shared/manifest';
import { S3Store } from '@uda/shared/object-store';
import { createTestBucket, type TestBucket } from '@uda/test-support/s3';
import { reader } from '@uda/test-support/metrics';
import { Metrics } from '../metrics.ts';
import { CacheWarmer, type WarmRound } from './cache-warmer.ts';
import { DownloadCounts } from './download-counts.ts';
import { ObjectCopier } from './object-copier.ts';
import { ObjectCache } from './object-cache.ts';
import { sendObject } from './send-object.ts';
import { type S3Proxy, startS3Proxy } from '../../test/support/s3-proxy.ts';

const MB = 1024 * 1024;
let bucket: TestBucket;
let proxy: S3Proxy;
/** The store as the API sees it: every request goes through the proxy. */
let store: S3Store;
const servers: Server[] = [];

beforeAll(async () => {
  bucket = await createTestBucket('warm');
  proxy = await startS3Proxy(bucket.env.S3_ENDPOINT!, bucket.bucket);
  store = new S3Store({
    bucket: bucket.bucket,
    region: bucket.env.S3_REGION ?? 'us-east-1',
    endpoint: proxy.endpoint,
    accessKeyId: bucket.env.S3_ACCESS_KEY_ID,
    secretAccessKey: bucket.env.S3_SECRET_ACCESS_KEY,
    forcePathStyle: true,
    partSizeBytes: 5 * MB,
  });
});

afterAll(async () => {
  for (const server of servers) server.close();
  await proxy.close();
  await bucket.remove();
});

interface Published {
  readonly manifest: Manifest;
  readonly bytes: Record<string, Buffer>;
  keyOf(name: string): string;
}

/** Uploads files under a new version (straight to S3, not through the proxy) and returns its manifest. */
async function publish(files: Record<string, number>): Promise<Published> {
  const version = newVersion(new Date(), randomBytes(3).toString('hex'));
  const bytes: Record<string, Buffer> = {};
  const entries = [];
  for (const [name, size] of Object.entries(files)) {
    bytes[name] = randomBytes(size);
    const info = await bucket.store.putBytes(`${versionPrefix(version)}${name}`, bytes[name]);
    entries.push({ name, key: info.key, kind: 'bulk', format: 'zip', size, sha256: 'a'.repeat(64), etag: info.etag, content_type: 'application/zip' });
  }
  const manifest = manifestSchema.parse({ version, built_at: new Date().toISOString(), tables: {}, files: entries });
  return { manifest, bytes, keyOf: (name) => `${versionPrefix(version)}${name}` };
}

async function openCache(maxBytes: number): Promise<{ cache: ObjectCache; metrics: Metrics; dir: string; errors: string[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'uda-warm-'));
  const metrics = new Metrics({ defaultMetrics: false });
  const errors: string[] = [];
  const cache = await ObjectCache.open({ dir, maxBytes, metrics, onError: (_error, what) => errors.push(what) });
  return { cache, metrics, dir, errors };
}

/** Where the copies run: the API's way (a worker thread with its own store client), and this thread. */
let inWorker = true;

function warmerFor(cache: ObjectCache, published: Published, options: { downloads?: DownloadCounts; metrics?: Metrics; concurrency?: number } = {}): CacheWarmer {
  const settings = { S3_BUCKET: bucket.bucket, S3_ENDPOINT: proxy.endpoint, S3_REGION: bucket.env.S3_REGION ?? 'us-east-1', S3_ACCESS_KEY_ID: bucket.env.S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY: bucket.env.S3_SECRET_ACCESS_KEY, S3_FORCE_PATH_STYLE: true, S3_PART_SIZE_MB: 5, DATA_DIR: tmpdir() };
  const warmer = new CacheWarmer({
    cache,
    store,
    ...(inWorker ? { copier: new ObjectCopier(settings) } : {}),
    manifests: { current: async () => published.manifest },
    downloads: options.downloads ?? new DownloadCounts(),
    concurrency: options.concurrency ?? 1,
    pollMs: 60_000,
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
  warmers.push(warmer);
  return warmer;
}
const warmers: CacheWarmer[] = [];
afterEach(async () => {
  for (const warmer of warmers.splice(0)) await warmer.stop();
});

/** An HTTP server that serves `/<key>` with sendObject through `cache` from the proxied store. */
async function serve(cache: ObjectCache): Promise<string> {
  const server = createServer((req, res) => {
    void sendObject(req, res, { store, cache, key: decodeURIComponent((req.url ?? '/').slice(1)), contentType: 'application/zip' }).then((outcome) => {
      if (outcome.status === 404) res.writeHead(404).end();
    });
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function download(base: string, key: string): Promise<Buffer> {
  const res = await fetch(`${base}/${encodeURIComponent(key)}`);
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

/** The cache folder's committed files' contents and the names of fills still in progress. */
async function onDisk(dir: string): Promise<{ committed: Buffer[]; fills: string[] }> {
  const names = await readdir(dir);
  const committed = await Promise.all(names.filter((n) => /^[0-9a-f]{64}$/.test(n)).map((n) => readFile(join(dir, n))));
  return { committed, fills: names.filter((n) => n.startsWith('.fill-')) };
}

function getsOf(keys: readonly string[]): string[] {
  return proxy.gets.filter((key) => keys.includes(key));
}

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((r) => setTimeout(r, 5));
}

describe.each([['in a worker thread', true], ['in the calling thread', false]])('cache warm-up, copies %s', (_where, worker) => {
  beforeAll(() => {
    inWorker = worker;
  });

  it('copies a new version into the cache, most downloaded first; its first downloads then read nothing from S3', async () => {
    const published = await publish({ 'a.zip': MB, 'b.zip': MB + 1, 'c.zip': MB + 2 });
    const keys = ['a.zip', 'b.zip', 'c.zip'].map(published.keyOf);
    const downloads = new DownloadCounts();
    for (const name of ['c.zip', 'b.zip', 'c.zip', 'c.zip']) downloads.count(name);
    const { cache, metrics } = await openCache(64 * MB);
    const warmer = warmerFor(cache, published, { downloads, metrics });

    const round = await warmer.poll();
    expect(round?.warmed).toEqual(['c.zip', 'b.zip', 'a.zip']);
    expect(getsOf(keys)).toEqual([keys[2], keys[1], keys[0]]);
    const value = reader(metrics.registry);
    expect(await value('uda_object_cache_warmed_total')).toBe(3);
    expect(await value('uda_object_cache_warmed_bytes_total')).toBe(3 * MB + 3);

    const base = await serve(cache);
    for (const name of ['a.zip', 'b.zip', 'c.zip']) expect((await download(base, published.keyOf(name))).equals(published.bytes[name]!)).toBe(true);
    expect(getsOf(keys)).toHaveLength(3);
    // The same version again: nothing to do.
    expect(await warmer.poll()).toBeUndefined();
    expect(getsOf(keys)).toHaveLength(3);
  });

  it('warms only what fits in the bound, evicting older entries but never the files it warms for', async () => {
    const maxBytes = 5 * MB;
    const { cache, dir, metrics } = await openCache(maxBytes);
    const older = await publish({ 'old.zip': 2 * MB });
    const published = await publish({ 'x.zip': 2 * MB, 'y.zip': 2 * MB, 'z.zip': 2 * MB });
    const info = async (key: string) => (await store.head(key))!;
    // x is cached first and old.zip after it, so x is the least recently used entry when y needs room.
    expect(await cache.copyIn(store, await info(published.keyOf('x.zip')))).toBe(true);
    expect(await cache.copyIn(store, await info(older.keyOf('old.zip')))).toBe(true);
    const downloads = new DownloadCounts();
    downloads.count('x.zip');

    const round = await warmerFor(cache, published, { downloads }).warm(published.manifest);
    // x was cached already; y fits once old.zip goes; z would pass the bound.
    expect(round.warmed).toEqual(['y.zip']);
    const { committed } = await onDisk(dir);
    expect(committed.map((b) => b.length).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(maxBytes);
    expect(committed).toHaveLength(2);
    for (const name of ['x.zip', 'y.zip']) expect(committed.some((b) => b.equals(published.bytes[name]!))).toBe(true);
    expect(cache.heldBytes).toBe(4 * MB);
    expect(await reader(metrics.registry)('uda_object_cache_evictions_total')).toBe(1);
    expect(getsOf([published.keyOf('z.zip')])).toEqual([]);
  });

  it('stop() cancels the copy in flight and leaves no file behind', async () => {
    const published = await publish({ 'slow.zip': 8 * MB });
    const key = published.keyOf('slow.zip');
    const { cache, dir, errors } = await openCache(64 * MB);
    const warmer = warmerFor(cache, published);
    proxy.delayMs = 20;
    try {
      const round: Promise<WarmRound> = warmer.warm(published.manifest);
      await until(() => proxy.bodyBytes(key) > 0);
      await warmer.stop();
      expect((await round).warmed).toEqual([]);
    } finally {
      proxy.delayMs = 0;
    }
    expect(proxy.bodyBytes(key)).toBeLessThan(8 * MB);
    // A cancellation is not reported as a failure.
    expect(errors).toEqual([]);
    expect(await onDisk(dir)).toEqual({ committed: [], fills: [] });
    expect(cache.heldBytes).toBe(0);
    // Stopped for good: a poll copies nothing.
    expect(await warmer.poll()).toBeUndefined();
  });

  it('leaves no partial file when S3 breaks the copy part-way; the first download then serves the whole file', async () => {
    const published = await publish({ 'broken.zip': 4 * MB });
    const key = published.keyOf('broken.zip');
    const { cache, dir, errors } = await openCache(64 * MB);
    proxy.cut = { key, afterBytes: MB };
    try {
      expect((await warmerFor(cache, published).warm(published.manifest)).warmed).toEqual([]);
    } finally {
      proxy.cut = undefined;
    }
    expect(errors).toEqual([`caching ${key} failed; it stays in the object store`]);
    expect(await onDisk(dir)).toEqual({ committed: [], fills: [] });
    expect(cache.heldBytes).toBe(0);
    expect((await download(await serve(cache), key)).equals(published.bytes['broken.zip']!)).toBe(true);
  });

  it('a download of a file being warmed gets it whole from S3, and one intact file is cached', async () => {
    const published = await publish({ 'during.zip': 4 * MB });
    const key = published.keyOf('during.zip');
    const { cache, dir } = await openCache(64 * MB);
    const base = await serve(cache);
    proxy.delayMs = 5;
    try {
      const round = warmerFor(cache, published).warm(published.manifest);
      await until(() => proxy.bodyBytes(key) > 0);
      expect((await download(base, key)).equals(published.bytes['during.zip']!)).toBe(true);
      expect((await round).warmed).toEqual(['during.zip']);
    } finally {
      proxy.delayMs = 0;
    }
    const { committed, fills } = await onDisk(dir);
    expect(fills).toEqual([]);
    expect(committed).toHaveLength(1);
    expect(committed[0]!.equals(published.bytes['during.zip']!)).toBe(true);
  });

  it('the warm-up of a file a client is downloading copies nothing more, and one intact file is cached', async () => {
    const published = await publish({ 'first.zip': 4 * MB });
    const key = published.keyOf('first.zip');
    const { cache, dir } = await openCache(64 * MB);
    const base = await serve(cache);
    proxy.delayMs = 5;
    try {
      const client = download(base, key);
      await until(() => proxy.bodyBytes(key) > 0);
      expect((await warmerFor(cache, published).warm(published.manifest)).warmed).toEqual([]);
      expect((await client).equals(published.bytes['first.zip']!)).toBe(true);
    } finally {
      proxy.delayMs = 0;
    }
    await until(async () => (await onDisk(dir)).committed.length === 1);
    const { committed, fills } = await onDisk(dir);
    expect(fills).toEqual([]);
    expect(committed[0]!.equals(published.bytes['first.zip']!)).toBe(true);
    expect(getsOf([key])).toEqual([key]);
  });
});
