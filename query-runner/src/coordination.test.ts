/** One contract, two adapters: Redis (real server) and in-process. */
import { afterAll, describe, it, expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { ResultMeta } from '@uda/shared/runner-contract';
import { redisPrefix } from '../test/harness.ts';
import type { Coordination } from './coordination.ts';
import { createMemoryCoordination } from './coordination-memory.ts';
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

describe('redis coordination during an outage', () => {
  it('answers QUERY_BACKEND_UNAVAILABLE instead of failing with an internal error', async () => {
    const down = createRedisCoordination('redis://127.0.0.1:1', redisPrefix('down'));
    await expect(down.locks.acquire(randomUUID(), 1000)).rejects.toMatchObject({ code: 'QUERY_BACKEND_UNAVAILABLE' });
    await expect(down.index.get(randomUUID())).rejects.toMatchObject({ code: 'QUERY_BACKEND_UNAVAILABLE' });
    await down.close();
  });
});
