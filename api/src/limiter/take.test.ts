import { afterAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { TEST_REDIS_URL, uniquePrefix } from '@uda/test-support/api-harness';
import { freePort } from '../../test/support/spawn.ts';
import { MemoryLimiterBackend } from './memory.ts';
import { RedisLimiterBackend, createRedisClient } from './redis.ts';
import type { LimiterBackend } from './types.ts';

const clients: Redis[] = [];
afterAll(() => {
  for (const client of clients) client.disconnect();
});

/** Burst 3 then an allowance of 2 that never counts a refusal, as the anonymous chain takes them. */
async function scenario(backend: LimiterBackend) {
  const burst = backend.counter({ name: 'burst', points: 3, durationS: 60 });
  const allowance = backend.counter({ name: 'anon', points: 2, durationS: 60 });
  const takes = [
    { counter: burst, key: 'ip' },
    { counter: allowance, key: 'ip', refundIfOver: true },
  ];
  const rounds = [];
  for (let i = 0; i < 4; i++) rounds.push((await backend.take(takes)).map(({ consumed, over }) => ({ consumed, over })));
  return { rounds, burst: (await burst.get('ip'))?.consumedPoints, allowance: (await allowance.get('ip'))?.consumedPoints };
}

const expected = {
  rounds: [
    [{ consumed: 1, over: false }, { consumed: 1, over: false }],
    [{ consumed: 2, over: false }, { consumed: 2, over: false }],
    // The allowance is spent: refused, and the refusal given back.
    [{ consumed: 3, over: false }, { consumed: 3, over: true }],
    // The burst is spent: the allowance is not touched.
    [{ consumed: 4, over: true }],
  ],
  burst: 4,
  allowance: 2,
};

describe('taking several counters at once', () => {
  it('decides in one Redis script exactly as the in-process counters do, on the keys rate-limiter-flexible reads', async () => {
    const client = new Redis(TEST_REDIS_URL);
    clients.push(client);
    expect(await scenario(new RedisLimiterBackend({ client, prefix: uniquePrefix() }))).toEqual(expected);
    expect(await scenario(new MemoryLimiterBackend(uniquePrefix()))).toEqual(expected);
  });

  it('keeps limiting on the insurance limiters while Redis is unreachable', async () => {
    const client = createRedisClient(`redis://127.0.0.1:${await freePort()}`);
    clients.push(client);
    const backend = new RedisLimiterBackend({ client, prefix: uniquePrefix() });
    expect(client.status).not.toBe('ready');
    expect((await scenario(backend)).rounds).toEqual(expected.rounds);
  });
});
