/**
 * The fair-share store, both adapters, on real Redis: a caller holds at most `limit` tokens, a
 * released token frees its place, an unreleased one lapses by itself (a dead pod leaks nothing),
 * and spent runner time adds up per window.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { TEST_REDIS_URL, uniquePrefix } from '@uda/test-support/api-harness';
import { type FairStore, MemoryFairStore } from './store.ts';
import { RedisFairStore } from './store-redis.ts';

let redis: Redis;
beforeAll(async () => {
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  await redis.ping();
});
afterAll(() => redis.disconnect());

const adapters: [string, () => FairStore][] = [
  ['memory', () => new MemoryFairStore()],
  ['redis', () => new RedisFairStore({ redis, prefix: uniquePrefix(), onError: (error) => { throw error; } })],
];

/** A token, without budgets (their check is `fair-share.test.ts`'s). */
async function tryHold(store: FairStore, key: string, limit: number, ttlMs: number): Promise<string | undefined> {
  return (await store.start(key, limit, ttlMs, [])).token;
}

async function until(condition: () => Promise<boolean>, boundMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + boundMs;
  while (Date.now() < deadline) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

describe.each(adapters)('fair-share store (%s)', (_name, make) => {
  it('holds at most the limit per caller, and a release frees a place', async () => {
    const store = make();
    const first = await tryHold(store, 'a', 2, 60_000);
    const second = await tryHold(store, 'a', 2, 60_000);
    expect(first).toBeDefined();
    expect(second).toBeDefined();
    expect(await tryHold(store, 'a', 2, 60_000)).toBeUndefined();
    expect(await tryHold(store, 'b', 2, 60_000)).toBeDefined();
    await store.release('a', first!);
    expect(await tryHold(store, 'a', 2, 60_000)).toBeDefined();
  });

  it('a token never released lapses after its TTL', async () => {
    const store = make();
    expect(await tryHold(store, 'dead-pod', 1, 300)).toBeDefined();
    expect(await tryHold(store, 'dead-pod', 1, 300)).toBeUndefined();
    expect(await until(async () => (await tryHold(store, 'dead-pod', 1, 300)) !== undefined)).toBe(true);
  });

  it('adds spent runner time per window', async () => {
    const store = make();
    await store.spend('a', 7, 1500, 60);
    await store.spend('a', 7, 700, 60);
    expect(await store.spent('a', 7)).toBe(2200);
    expect(await store.spent('a', 8)).toBe(0);
    expect(await store.spent('b', 7)).toBe(0);
  });

  it('a start whose budget is spent takes no token and names the first spent budget', async () => {
    const store = make();
    await store.spend('address', 7, 500, 60);
    const budgets = [{ key: 'own', window: 7, capMs: 1000 }, { key: 'address', window: 7, capMs: 500 }];
    expect(await store.start('own', 1, 60_000, budgets)).toEqual({ spentBudget: 1 });
    await store.spend('own', 7, 1000, 60);
    expect(await store.start('own', 1, 60_000, budgets)).toEqual({ spentBudget: 0 });
    // No token was taken by the refused starts: the only place is still free.
    expect(await tryHold(store, 'own', 1, 60_000)).toBeDefined();
  });
});
