/** One contract, two adapters: Redis (real server) and in-process. */
import { afterAll, describe, it, expect } from '@jest/globals';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { type AddressInfo, createServer } from 'node:net';
import type { ResultMeta } from '@uda/shared/runner-contract';
import { redisPrefix } from '@uda/test-support/runner-harness';
import type { Coordination } from './coordination.ts';
import { MAX_RESULTS, createMemoryCoordination } from './coordination-memory.ts';
import { createRedisCoordination } from './coordination-redis.ts';

const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const adapters: [string, Coordination][] = [
  ['redis', createRedisCoordination(redisUrl, redisPrefix('coordination'))],
  ['memory', createMemoryCoordination()],
];
afterAll(async () => {
  for (const [, c] of adapters) await c.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function meta(queryId: string, ttlMs: number): ResultMeta {
  return {
    queryId, rowCount: 1, truncated: false, sqlExecuted: 'SELECT 1', columns: [{ name: 'x', type: 'INTEGER' }],
    tables: [], rowsBySource: {}, dataVersion: 'v', createdAt: new Date().toISOString(), expiresAt: Date.now() + ttlMs,
    objects: { parquet: { key: 'k', size: 1, etag: '"e"', contentType: 'application/vnd.apache.parquet' } },
  };
}

describe.each(adapters)('%s coordination', (_name, coordination) => {
  it('gives a held lock to one caller only, with a retry hint for the other', async () => {
    const id = randomUUID();
    const first = await coordination.locks.acquire(id, 5_000);
    const second = await coordination.locks.acquire(id, 5_000);
    expect(first.acquired).toBe(true);
    expect(second).toMatchObject({ acquired: false });
    if (!second.acquired) expect(second.retryAfterMs).toBeGreaterThan(0);
    if (first.acquired) await first.lock.release();
    expect((await coordination.locks.acquire(id, 5_000)).acquired).toBe(true);
  });

  it('lets a lock expire, and a late release never frees the next holder', async () => {
    const id = randomUUID();
    const stale = await coordination.locks.acquire(id, 100);
    await sleep(200);
    const next = await coordination.locks.acquire(id, 5_000);
    expect(next.acquired).toBe(true);
    if (stale.acquired) await stale.lock.release();
    expect((await coordination.locks.acquire(id, 5_000)).acquired).toBe(false);
  });

  it('forgets a result when its window closes, and an update never revives it', async () => {
    const entry = meta(randomUUID(), 300);
    await coordination.index.put(entry);
    expect(await coordination.index.get(entry.queryId)).toEqual(entry);
    await sleep(400);
    expect(await coordination.index.get(entry.queryId)).toBeUndefined();
    await coordination.index.update(entry);
    expect(await coordination.index.get(entry.queryId)).toBeUndefined();
  });

  it('updates a live entry in place', async () => {
    const entry = meta(randomUUID(), 5_000);
    await coordination.index.put(entry);
    const csv = { key: 'c', size: 2, etag: '"c"', contentType: 'text/csv' };
    await coordination.index.update({ ...entry, objects: { ...entry.objects, csv } });
    expect((await coordination.index.get(entry.queryId))?.objects.csv).toEqual(csv);
  });
});

describe('memory coordination', () => {
  it('keeps a bounded number of results, dropping the oldest first', async () => {
    const memory = createMemoryCoordination();
    const ids = Array.from({ length: MAX_RESULTS + 10 }, () => randomUUID());
    for (const id of ids) await memory.index.put(meta(id, 60_000));
    expect(await memory.index.get(ids[0]!)).toBeUndefined();
    expect(await memory.index.get(ids.at(-1)!)).toBeDefined();
    await memory.close();
  });
});

describe('redis locks are leases their holder renews', () => {
  it('a holder that keeps running keeps its lock past the lease; the refusal names the lease, not the lifetime', async () => {
    const prefix = redisPrefix('lease');
    const holder = createRedisCoordination(redisUrl, prefix, () => {}, { leaseMs: 300 });
    const other = createRedisCoordination(redisUrl, prefix, () => {}, { leaseMs: 300 });
    const id = randomUUID();
    const held = await holder.locks.acquire(id, 45_000);
    expect(held.acquired).toBe(true);
    await sleep(900);
    const refused = await other.locks.acquire(id, 45_000);
    expect(refused.acquired).toBe(false);
    if (!refused.acquired) expect(refused.retryAfterMs).toBeLessThanOrEqual(300);
    if (held.acquired) await held.lock.release();
    expect((await other.locks.acquire(id, 45_000)).acquired).toBe(true);
    await Promise.all([holder.close(), other.close()]);
  });

  it('frees the lock of a holder that died within one lease, although its lifetime is 45 s', async () => {
    const prefix = redisPrefix('dead');
    const victim = createRedisCoordination(redisUrl, prefix, () => {}, { leaseMs: 300 });
    const survivor = createRedisCoordination(redisUrl, prefix, () => {}, { leaseMs: 300 });
    const id = randomUUID();
    expect((await victim.locks.acquire(id, 45_000)).acquired).toBe(true);
    // The victim's connection goes away as a SIGKILL would take it: no release, no more renewals.
    await victim.close();
    const refused = await survivor.locks.acquire(id, 45_000);
    if (!refused.acquired) await sleep(refused.retryAfterMs + 50);
    expect((await survivor.locks.acquire(id, 45_000)).acquired).toBe(true);
    await survivor.close();
  });
});

describe('redis coordination during an outage', () => {
  it('falls back to the per-runner lock and index when Redis is unreachable', async () => {
    const down = createRedisCoordination('redis://127.0.0.1:1', redisPrefix('down'));
    const id = randomUUID();
    const first = await down.locks.acquire(id, 1000);
    expect(first.acquired).toBe(true);
    expect((await down.locks.acquire(id, 1000)).acquired).toBe(false);
    const entry = meta(randomUUID(), 5_000);
    await down.index.put(entry);
    expect(await down.index.get(entry.queryId)).toEqual(entry);
    await down.close();
  });

  it('keeps finding results it stored before Redis stopped, and keeps locking, after it stops', async () => {
    const port = await freePort();
    const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const errors: string[] = [];
    const coordination = createRedisCoordination(`redis://127.0.0.1:${port}`, redisPrefix('stops'), (e) => errors.push(e.message));
    try {
      const entry = meta(randomUUID(), 10_000);
      await coordination.index.put(entry);
      server.kill('SIGKILL');
      await new Promise((resolve) => server.once('exit', resolve));
      expect(await coordination.index.get(entry.queryId)).toEqual(entry);
      expect((await coordination.locks.acquire(randomUUID(), 1000)).acquired).toBe(true);
      expect(errors.join('\n')).toContain("using this runner's own locks and index");
    } finally {
      server.kill('SIGKILL');
      await coordination.close();
    }
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
