import { describe, expect, it } from '@jest/globals';
import type { LookupRequest, LookupResponse } from '@uda/shared/runner-contract';
import { StoredLookupCache } from './stored-cache.ts';

/** A stand-in runner client that counts calls and answers after a tick. */
function countingRunner() {
  const calls: LookupRequest[] = [];
  return {
    calls,
    async lookup(request: LookupRequest): Promise<LookupResponse> {
      calls.push(request);
      await new Promise((resolve) => setTimeout(resolve, 5));
      if (request.keywords === 'fail') throw new Error('runner down');
      return { results: [{ n: calls.length }], total: 1 };
    },
  };
}

const req = (keywords: string, limit = 10): LookupRequest => ({ source: 'sec', keywords, limit });

describe('StoredLookupCache', () => {
  it('coalesces identical concurrent lookups and reuses the answer until the TTL passes', async () => {
    let now = 0;
    const runner = countingRunner();
    const cache = new StoredLookupCache(runner, { ttlMs: 1_000, now: () => now });
    const answers = await Promise.all([cache.lookup(req('Bank')), cache.lookup(req('bank')), cache.lookup(req('bank'))]);
    expect(runner.calls).toHaveLength(1);
    expect(new Set(answers).size).toBe(1);
    now = 999;
    await cache.lookup(req('bank'));
    expect(runner.calls).toHaveLength(1);
    now = 1_000;
    await cache.lookup(req('bank'));
    expect(runner.calls).toHaveLength(2);
  });

  it('keys on the page size and never caches a failure', async () => {
    const runner = countingRunner();
    const cache = new StoredLookupCache(runner);
    await cache.lookup(req('bank', 5));
    await cache.lookup(req('bank', 6));
    expect(runner.calls).toHaveLength(2);
    await expect(cache.lookup(req('fail'))).rejects.toThrow('runner down');
    await expect(cache.lookup(req('fail'))).rejects.toThrow('runner down');
    expect(runner.calls).toHaveLength(4);
  });
});
