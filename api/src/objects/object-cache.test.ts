/**
 * The pod disk cache behind sendObject, over real HTTP on loopback, from the real S3-compatible
 * server: what a cached download serves, and what a cut or concurrent one leaves on disk.
 */
import { createServer, request, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestBucket, type TestBucket } from '@uda/test-support/s3';
import { Metrics } from '../metrics.ts';
import { reader } from '@uda/test-support/metrics';
import { ObjectCache } from './object-cache.ts';
import { sendObject, type SendOutcome } from './send-object.ts';

const MB = 1024 * 1024;
let bucket: TestBucket;
const servers: Server[] = [];

beforeAll(async () => {
  bucket = await createTestBucket('cache');
});

afterAll(async () => {
  for (const server of servers) server.close();
  await bucket.remove();
});

/** An HTTP server that serves `files/<path>` with sendObject through `cache`; its outcomes, in order. */
async function serve(cache: ObjectCache): Promise<{ base: string; outcomes: SendOutcome[] }> {
  const outcomes: SendOutcome[] = [];
  const server = createServer((req, res) => {
    void sendObject(req, res, { store: bucket.store, cache, key: `files/${(req.url ?? '').slice(1)}`, contentType: 'application/octet-stream' }).then((outcome) => {
      outcomes.push(outcome);
      if (outcome.status === 404) res.writeHead(404).end();
    });
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, outcomes };
}

async function openCache(maxBytes: number, dir?: string): Promise<{ cache: ObjectCache; metrics: Metrics; dir: string }> {
  const folder = dir ?? (await mkdtemp(join(tmpdir(), 'uda-object-cache-')));
  const metrics = new Metrics({ defaultMetrics: false });
  return { cache: await ObjectCache.open({ dir: folder, maxBytes, metrics }), metrics, dir: folder };
}

async function put(name: string, bytes: Buffer): Promise<void> {
  await bucket.store.putBytes(`files/${name}`, bytes);
}

async function body(res: Response): Promise<Buffer> {
  return Buffer.from(await res.arrayBuffer());
}

/**
 * Files in the cache folder, fills in progress included, with their total size. A fill may be
 * renamed into place between the listing and its stat: it is listed again on the next call.
 */
async function onDisk(dir: string): Promise<{ names: string[]; bytes: number }> {
  const names: string[] = [];
  let bytes = 0;
  for (const name of await readdir(dir)) {
    const size = await stat(join(dir, name)).then((s) => s.size, (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (size === undefined) continue;
    names.push(name);
    bytes += size;
  }
  return { names, bytes };
}

async function lookups(metrics: Metrics, outcome: 'hit' | 'miss'): Promise<number> {
  const values = (await metrics.objectCacheLookups.get()).values;
  return values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
}

/** Resolves once the server has recorded `count` outcomes: a fill is finished when its outcome is. */
async function settled(outcomes: SendOutcome[], count: number): Promise<void> {
  while (outcomes.length < count) await new Promise((r) => setTimeout(r, 10));
}

describe('object cache', () => {
  it('serves a cached object byte for byte, whole and in ranges, without reading the store again', async () => {
    const bytes = randomBytes(3 * MB + 17);
    await put('hit.bin', bytes);
    const { cache, metrics, dir } = await openCache(64 * MB);
    const { base, outcomes } = await serve(cache);

    expect((await body(await fetch(`${base}/hit.bin`))).equals(bytes)).toBe(true);
    await settled(outcomes, 1);
    const cachedFiles = (await onDisk(dir)).names;
    expect(cachedFiles).toHaveLength(1);
    expect((await readFile(join(dir, cachedFiles[0]!))).equals(bytes)).toBe(true);

    const again = await fetch(`${base}/hit.bin`);
    expect(again.status).toBe(200);
    expect(again.headers.get('content-length')).toBe(String(bytes.length));
    expect((await body(again)).equals(bytes)).toBe(true);
    for (const [range, from, to] of [['bytes=0-0', 0, 0], ['bytes=1048570-2097160', 1048570, 2097160], ['bytes=-5', bytes.length - 5, bytes.length - 1]] as const) {
      const part = await fetch(`${base}/hit.bin`, { headers: { Range: range } });
      expect(part.status).toBe(206);
      expect(part.headers.get('content-range')).toBe(`bytes ${from}-${to}/${bytes.length}`);
      expect((await body(part)).equals(bytes.subarray(from, to + 1))).toBe(true);
    }
    expect(await lookups(metrics, 'hit')).toBe(4);
    expect(await lookups(metrics, 'miss')).toBe(1);
    await settled(outcomes, 5);
    expect(outcomes.every((o) => o.status !== 404 && o.complete)).toBe(true);
  });

  it('copies an uncached object in the background on a range read, so that later ranges come from disk', async () => {
    const bytes = randomBytes(3 * MB);
    await put('range-first.bin', bytes);
    const { cache, metrics, dir } = await openCache(64 * MB);
    const { base } = await serve(cache);
    const first = await fetch(`${base}/range-first.bin`, { headers: { Range: 'bytes=-8' } });
    expect((await body(first)).equals(bytes.subarray(bytes.length - 8))).toBe(true);
    while (!(await onDisk(dir)).names.some((name) => /^[0-9a-f]{64}$/.test(name))) await new Promise((r) => setTimeout(r, 10));
    const { names } = await onDisk(dir);
    expect(names).toHaveLength(1);
    expect((await readFile(join(dir, names[0]!))).equals(bytes)).toBe(true);
    const next = await fetch(`${base}/range-first.bin`, { headers: { Range: 'bytes=100-2000000' } });
    expect((await body(next)).equals(bytes.subarray(100, 2_000_001))).toBe(true);
    expect(await lookups(metrics, 'hit')).toBe(1);
  });

  it('serves the new bytes when a key is replaced by a new version', async () => {
    const { cache } = await openCache(64 * MB);
    const { base, outcomes } = await serve(cache);
    await put('replaced.bin', randomBytes(MB));
    await body(await fetch(`${base}/replaced.bin`));
    await settled(outcomes, 1);
    const replacement = randomBytes(MB);
    await put('replaced.bin', replacement);
    expect((await body(await fetch(`${base}/replaced.bin`))).equals(replacement)).toBe(true);
  });

  it('keeps no file of a download the client cuts part-way, and reports it incomplete', async () => {
    await put('cut.bin', randomBytes(16 * MB));
    const { cache, dir } = await openCache(64 * MB);
    const { base, outcomes } = await serve(cache);
    await new Promise<void>((resolve) => {
      const req = request(`${base}/cut.bin`, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.end();
    });
    await settled(outcomes, 1);
    expect(outcomes[0]!.status !== 404 && outcomes[0]!.complete).toBe(false);
    expect((await onDisk(dir)).names).toEqual([]);
    expect(cache.heldBytes).toBe(0);
  });

  it('reports a cut download of a cached file incomplete', async () => {
    await put('cut-cached.bin', randomBytes(16 * MB));
    const { cache } = await openCache(64 * MB);
    const { base, outcomes } = await serve(cache);
    await body(await fetch(`${base}/cut-cached.bin`));
    await settled(outcomes, 1);
    await new Promise<void>((resolve) => {
      const req = request(`${base}/cut-cached.bin`, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.end();
    });
    await settled(outcomes, 2);
    expect(outcomes[1]!.status !== 404 && outcomes[1]!.complete).toBe(false);
  });

  it('writes one intact file when several first downloads of an object run at once', async () => {
    const bytes = randomBytes(4 * MB);
    await put('concurrent.bin', bytes);
    const { cache, dir } = await openCache(64 * MB);
    const { base, outcomes } = await serve(cache);
    const bodies = await Promise.all(Array.from({ length: 4 }, async () => body(await fetch(`${base}/concurrent.bin`))));
    expect(bodies.every((b) => b.equals(bytes))).toBe(true);
    await settled(outcomes, 4);
    const { names } = await onDisk(dir);
    expect(names).toHaveLength(1);
    expect((await readFile(join(dir, names[0]!))).equals(bytes)).toBe(true);
    expect((await body(await fetch(`${base}/concurrent.bin`))).equals(bytes)).toBe(true);
  });

  it('evicts the least recently used files to stay within its bound, and skips objects larger than it', async () => {
    const maxBytes = 5 * MB;
    const { cache, dir, metrics } = await openCache(maxBytes);
    const { base, outcomes } = await serve(cache);
    const files = ['a', 'b', 'c', 'd'].map((name) => ({ name: `evict-${name}.bin`, bytes: randomBytes(2 * MB) }));
    for (const file of files) await put(file.name, file.bytes);
    await put('too-big.bin', randomBytes(6 * MB));
    let served = 0;
    // a, b, then a again (most recent), then c and d: b and a go, in that order.
    for (const file of [files[0]!, files[1]!, files[0]!, files[2]!, files[3]!]) {
      expect((await body(await fetch(`${base}/${file.name}`))).equals(file.bytes)).toBe(true);
      await settled(outcomes, ++served);
      expect((await onDisk(dir)).bytes).toBeLessThanOrEqual(maxBytes);
    }
    await body(await fetch(`${base}/too-big.bin`));
    await settled(outcomes, served + 1);
    const { names, bytes } = await onDisk(dir);
    expect(bytes).toBeLessThanOrEqual(maxBytes);
    expect(names).toHaveLength(2);
    expect(cache.heldBytes).toBe(bytes);
    // Four 2 MB files were filled and two are kept: uda_object_cache_evictions_total counts the two that went.
    expect(await reader(metrics.registry)('uda_object_cache_evictions_total')).toBe(2);
    // c and d are the two kept: reading them again adds no file.
    for (const file of [files[2]!, files[3]!]) expect((await body(await fetch(`${base}/${file.name}`))).equals(file.bytes)).toBe(true);
    expect((await onDisk(dir)).names.sort()).toEqual(names.sort());
  });

  it('serves from the store when its folder cannot be created', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'uda-object-cache-'));
    await writeFile(join(parent, 'not-a-folder'), 'x');
    const bytes = randomBytes(MB);
    await put('no-folder.bin', bytes);
    const { cache } = await openCache(64 * MB, join(parent, 'not-a-folder', 'cache'));
    const { base } = await serve(cache);
    expect((await body(await fetch(`${base}/no-folder.bin`))).equals(bytes)).toBe(true);
    expect((await body(await fetch(`${base}/no-folder.bin`))).equals(bytes)).toBe(true);
    expect(cache.heldBytes).toBe(0);
  });

  it('keeps the files a previous process committed and removes its unfinished fills', async () => {
    const bytes = randomBytes(MB);
    await put('restart.bin', bytes);
    const first = await openCache(64 * MB);
    const served = await serve(first.cache);
    await body(await fetch(`${served.base}/restart.bin`));
    await settled(served.outcomes, 1);
    await writeFile(join(first.dir, '.fill-left-by-a-crash'), 'partial');
    const second = await openCache(64 * MB, first.dir);
    expect((await onDisk(first.dir)).names).toHaveLength(1);
    const { base } = await serve(second.cache);
    expect((await body(await fetch(`${base}/restart.bin`))).equals(bytes)).toBe(true);
    expect(await lookups(second.metrics, 'hit')).toBe(1);
  });
});
