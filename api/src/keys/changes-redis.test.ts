import { afterAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { TEST_REDIS_URL, uniquePrefix } from '@uda/test-support/api-harness';
import { freePort } from '../../test/support/spawn.ts';
import { createRedisClient } from '../limiter/redis.ts';
import { RedisKeyChanges } from './changes-redis.ts';

const open: { close(): Promise<void> }[] = [];
const clients: Redis[] = [];
afterAll(async () => {
  for (const changes of open) await changes.close();
  for (const client of clients) client.disconnect();
});

function changesOn(redis: Redis, prefix: string): RedisKeyChanges {
  const changes = new RedisKeyChanges({ redis, prefix });
  open.push(changes);
  return changes;
}

describe('key change announcements over Redis', () => {
  it('reach the other pod, and the announcing pod before announce returns', async () => {
    const prefix = uniquePrefix();
    const [redisA, redisB] = [new Redis(TEST_REDIS_URL), new Redis(TEST_REDIS_URL)];
    clients.push(redisA, redisB);
    const [a, b] = [changesOn(redisA, prefix), changesOn(redisB, prefix)];
    expect(await a.ready()).toBe(true);
    expect(await b.ready()).toBe(true);
    const heardA: (string | undefined)[] = [];
    const heardB = new Promise<string | undefined>((resolve) => b.listen(resolve));
    a.listen((accountId) => heardA.push(accountId));
    await a.announce('account-1');
    expect(heardA).toEqual(['account-1']);
    expect(await heardB).toBe('account-1');
  });

  it('reports itself disconnected while Redis is unreachable, so caches shorten their trust', async () => {
    const redis = createRedisClient(`redis://127.0.0.1:${await freePort()}`);
    clients.push(redis);
    const changes = changesOn(redis, uniquePrefix());
    expect(await changes.ready(200)).toBe(false);
    expect(changes.connected).toBe(false);
  });
});
