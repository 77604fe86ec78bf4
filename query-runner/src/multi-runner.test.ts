/**
 * Runners as separate processes sharing Redis and the bucket: two identical
 * concurrent queries on two runners run once; a runner killed mid-query leaves a lock that expires.
 */
import { afterAll, beforeAll, describe, it, expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { queryResponseSchema } from '@uda/shared/runner-contract';
import { createTestBucket } from '@uda/test-support/s3';
import type { TestBucket } from '@uda/test-support/s3';
import { buildFixtureDb, publishDatabase, tempPath } from '@uda/test-support/runner-fixtures';
import { counterValue, postQuery, redisPrefix, runnerEnv, startChild, waitReady } from '@uda/test-support/runner-harness';
import type { ChildRunner } from '@uda/test-support/runner-harness';

let bucket: TestBucket;
const dbPath = tempPath('service.db');
const children: ChildRunner[] = [];
// A query that takes a few seconds and then succeeds: slow enough to overlap, well under the limit.
const SLOW_SQL = 'SELECT count(*) AS n FROM range(500000000) t(a) WHERE a % 7 = 3';

beforeAll(async () => {
  bucket = await createTestBucket('runner-multi');
  await publishDatabase(bucket.store, await buildFixtureDb(dbPath, { books: 100 }));
});

afterAll(async () => {
  for (const child of children) {
    if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGTERM');
    await child.exited;
  }
  await bucket.remove();
  await rm(dbPath, { force: true });
});

async function start(env: Record<string, string>): Promise<ChildRunner> {
  const child = await startChild(await runnerEnv(bucket.env, env));
  children.push(child);
  await waitReady(child.url);
  return child;
}

describe('two runners', () => {
  it('run two concurrent identical queries exactly once, answering the other QUERY_BUSY', async () => {
    const prefix = redisPrefix('multi');
    const [a, b] = await Promise.all([start({ REDIS_KEY_PREFIX: prefix }), start({ REDIS_KEY_PREFIX: prefix })]);
    const queryId = randomUUID();
    const first = postQuery(a!.url, { queryId, sql: SLOW_SQL });
    await new Promise((r) => setTimeout(r, 300));
    const second = await postQuery(b!.url, { queryId, sql: SLOW_SQL });
    const done = await first;
    expect(done.status).toBe(200);
    expect(second.status).toBe(503);
    expect(second.body.code).toBe('QUERY_BUSY');
    const executions = (await counterValue(a!.metricsUrl, 'uda_query_executions_total')) + (await counterValue(b!.metricsUrl, 'uda_query_executions_total'));
    expect(executions).toBe(1);
    // Any runner serves any stored result.
    const again = queryResponseSchema.parse((await postQuery(b!.url, { queryId, sql: SLOW_SQL })).body);
    expect(again.cached).toBe(true);
  });

  it('recover a query whose runner was SIGKILLed mid-query after the Retry-After the survivor names', async () => {
    const prefix = redisPrefix('sigkill');
    // Default lock lifetime (45 s): the dead runner's lease, not the lifetime, decides the wait.
    const victim = await start({ REDIS_KEY_PREFIX: prefix });
    const survivor = await start({ REDIS_KEY_PREFIX: prefix });
    const queryId = randomUUID();
    const doomed = postQuery(victim.url, { queryId, sql: SLOW_SQL }).catch(() => 'connection lost');
    await new Promise((r) => setTimeout(r, 300));
    victim.child.kill('SIGKILL');
    expect(await victim.exited).toBe('SIGKILL');
    expect(await doomed).toBe('connection lost');
    const busy = await postQuery(survivor.url, { queryId, sql: SLOW_SQL });
    expect(busy.body.code).toBe('QUERY_BUSY');
    await new Promise((r) => setTimeout(r, Number(busy.headers.get('retry-after')) * 1000 + 200));
    const retry = await postQuery(survivor.url, { queryId, sql: SLOW_SQL });
    expect(retry.status).toBe(200);
  });
});

describe('one runner process', () => {
  it('finishes a running query on SIGTERM within the grace period, then exits 0', async () => {
    const prefix = redisPrefix('sigterm');
    const runner = await start({ REDIS_KEY_PREFIX: prefix, SHUTDOWN_GRACE_MS: '20000' });
    const queryId = randomUUID();
    const running = postQuery(runner.url, { queryId, sql: SLOW_SQL });
    await new Promise((r) => setTimeout(r, 300));
    runner.child.kill('SIGTERM');
    expect((await running).status).toBe(200);
    expect(await runner.exited).toBe(0);
  });

  it('interrupts a query still running when the grace period ends, answering 503 and releasing its lock', async () => {
    const prefix = redisPrefix('grace');
    const runner = await start({ REDIS_KEY_PREFIX: prefix, SHUTDOWN_GRACE_MS: '200' });
    const queryId = randomUUID();
    const running = postQuery(runner.url, { queryId, sql: SLOW_SQL });
    await new Promise((r) => setTimeout(r, 300));
    runner.child.kill('SIGTERM');
    const res = await running;
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('QUERY_BACKEND_UNAVAILABLE');
    expect(await runner.exited).toBe(0);
    const next = await start({ REDIS_KEY_PREFIX: prefix });
    expect((await postQuery(next.url, { queryId, sql: 'SELECT 1' })).status).toBe(200);
  });

  it('exits 1 with a clear message on a bad config', async () => {
    const error = await startChild(await runnerEnv(bucket.env, { QUERY_TIMEOUT_MS: 'soon' })).then(() => undefined, (e: unknown) => e);
    expect(String(error)).toContain('runner exited before listening: 1');
    expect(String(error)).toContain('Invalid configuration:\n  QUERY_TIMEOUT_MS:');
  });
});
