import { describe, expect, it } from '@jest/globals';
import { KeyCache } from './cache.ts';

const key = (accountId: string) => ({ keyId: `k-${accountId}`, accountId, tier: 'free' as const, legacy: false, emailVerified: true });
const options = { size: 3, ttlMs: 30_000, fallbackTtlMs: 1_000, negativeTtlMs: 2_000 };
const trusted = { now: 0, trusted: true };

describe('key cache', () => {
  it('keeps verified keys when a flood of unknown keys arrives', () => {
    const cache = new KeyCache(options);
    cache.set('h-a', key('a'), { now: 0, generation: 0 });
    for (let i = 0; i < 100; i++) cache.set(`random-${i}`, undefined, { now: 0, generation: 0 });
    expect(cache.get('h-a', trusted)).toEqual(key('a'));
    expect(cache.get('random-99', trusted)).toBeNull();
    expect(cache.get('random-0', trusted)).toBeUndefined();
  });

  it('evicts the least recently used key when full', () => {
    const cache = new KeyCache(options);
    for (const id of ['a', 'b', 'c']) cache.set(`h-${id}`, key(id), { now: 0, generation: 0 });
    cache.get('h-a', trusted);
    cache.set('h-d', key('d'), { now: 0, generation: 0 });
    expect(cache.get('h-b', trusted)).toBeUndefined();
    expect(cache.get('h-a', trusted)).toEqual(key('a'));
  });

  it("drops only the changed account's keys, and every unknown key", () => {
    const cache = new KeyCache(options);
    cache.set('h-a', key('a'), { now: 0, generation: 0 });
    cache.set('h-b', key('b'), { now: 0, generation: 0 });
    cache.set('h-x', undefined, { now: 0, generation: 0 });
    cache.invalidate('a');
    expect(cache.get('h-a', trusted)).toBeUndefined();
    expect(cache.get('h-x', trusted)).toBeUndefined();
    expect(cache.get('h-b', trusted)).toEqual(key('b'));
  });

  it('trusts an entry for the short TTL only while announcements cannot arrive', () => {
    const cache = new KeyCache(options);
    cache.set('h-a', key('a'), { now: 0, generation: 0 });
    expect(cache.get('h-a', { now: 5_000, trusted: true })).toEqual(key('a'));
    expect(cache.get('h-a', { now: 5_000, trusted: false })).toBeUndefined();
    expect(cache.get('h-a', { now: 30_000, trusted: true })).toBeUndefined();
  });

  it('does not store a lookup that started before an invalidation', () => {
    const cache = new KeyCache(options);
    const generation = cache.generation;
    cache.invalidate('a');
    cache.set('h-a', key('a'), { now: 0, generation });
    expect(cache.get('h-a', trusted)).toBeUndefined();
  });
});
