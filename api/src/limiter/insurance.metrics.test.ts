/**
 * `uda_insurance_limiter_active` reads 0 while the API's Redis answers and 1 once it is gone (the
 * in-process insurance limiter then decides), which is what the UdaRedisInsuranceLimiterActive
 * alert pages on.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type TestContext, openTestContext } from '@uda/test-support/api-harness';
import { freePort } from '../../test/support/spawn.ts';
import { reader, settledValue } from '@uda/test-support/metrics';

let ctx: TestContext;
let redis: ChildProcess;
let redisUrl: string;
beforeAll(async () => {
  ctx = await openTestContext();
  const port = await freePort();
  redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  redisUrl = `redis://127.0.0.1:${port}`;
}, 60_000);
afterAll(async () => {
  if (redis.exitCode === null) redis.kill('SIGKILL');
  await ctx.close();
});

describe('uda_insurance_limiter_active', () => {
  it('is 0 with Redis up and 1 after Redis stops', async () => {
    const api = await ctx.start({ config: { REDIS_URL: redisUrl }, useOwnRedis: true });
    const value = reader(api.services.metrics.registry);
    expect(await settledValue(() => value('uda_insurance_limiter_active'), 0)).toBe(0);
    redis.kill('SIGKILL');
    await new Promise((resolve) => redis.once('exit', resolve));
    expect(await settledValue(() => value('uda_insurance_limiter_active'), 1)).toBe(1);
    await api.close();
  });
});
