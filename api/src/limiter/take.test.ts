import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { TEST_REDIS_URL, uniquePrefix } from '@uda/test-support/api-harness';
import { freePort, stopNode } from '../../test/support/spawn.ts';
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

describe('a Redis that stops answering', () => {
  it('fails the waiting count over to the insurance limiter, and counts in Redis again once it answers', async () => {
    const port = await freePort();
    const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const client = createRedisClient(`redis://127.0.0.1:${port}`);
    try {
      const backend = new RedisLimiterBackend({ client, prefix: uniquePrefix() });
      const burst = backend.counter({ name: 'burst', points: 10, durationS: 60 });
      expect(await backend.ready(10_000)).toBe(true);
      // A fresh Redis doesn't know the script: this first call also goes through NOSCRIPT and EVAL.
      expect(await backend.take([{ counter: burst, key: 'ip' }])).toMatchObject([{ consumed: 1, over: false }]);
      // Stopped, the server still holds the connection open but answers nothing: only the
      // connection's deadline ends the wait (without it this take never resolves).
      redis.kill('SIGSTOP');
      expect(await backend.take([{ counter: burst, key: 'ip' }])).toMatchObject([{ consumed: 1, over: false }]);
      // The dropped connection is not ready meanwhile, so the next count doesn't wait at all.
      expect(await backend.take([{ counter: burst, key: 'ip' }])).toMatchObject([{ consumed: 2, over: false }]);
      redis.kill('SIGCONT');
      expect(await backend.ready(10_000)).toBe(true);
      // Redis's own count: the abandoned call had been sent, and Redis ran it when it resumed (a
      // count that errs strict); the one taken while the connection was down never reached it.
      expect(await backend.take([{ counter: burst, key: 'ip' }])).toMatchObject([{ consumed: 3, over: false }]);
    } finally {
      redis.kill('SIGCONT');
      await new Promise((resolve) => {
        client.once('end', resolve);
        client.disconnect();
      });
      await stopNode(redis, 'SIGKILL');
    }
  }, 30_000);
});

describe('taking several counters at once', () => {
  it('decides in one Redis script exactly as the in-process counters do, on the keys rate-limiter-flexible reads', async () => {
    const client = new Redis(TEST_REDIS_URL);
    clients.push(client);
    expect(await scenario(new RedisLimiterBackend({ client, prefix: uniquePrefix() }))).toEqual(expected);
    expect(await scenario(new MemoryLimiterBackend(uniquePrefix()))).toEqual(expected);
  });

  // The hold's rider answers its lease id, which billing writes to PostgreSQL as JSON: a Buffer
  // there is `{"type":"Buffer",…}`, and the whole flush of that pod's charges fails on it.
  it("hands the rider's reply over as text, as any ioredis command answers", async () => {
    const client = new Redis(TEST_REDIS_URL);
    clients.push(client);
    const backend = new RedisLimiterBackend({ client, prefix: uniquePrefix() });
    const burst = backend.counter({ name: 'burst', points: 3, durationS: 60 });
    expect(await backend.ready(10_000)).toBe(true);
    const { reply } = await backend.takeWith([{ counter: burst, key: 'ip' }], { lua: 'return {1, RA[1]}', keys: [], args: ['lease-1'] });
    expect(reply).toEqual([1, 'lease-1']);
  });

  it('keeps limiting on the insurance limiters while Redis is unreachable', async () => {
    const client = createRedisClient(`redis://127.0.0.1:${await freePort()}`);
    clients.push(client);
    const backend = new RedisLimiterBackend({ client, prefix: uniquePrefix() });
    expect(client.status).not.toBe('ready');
    expect((await scenario(backend)).rounds).toEqual(expected.rounds);
  });
});
