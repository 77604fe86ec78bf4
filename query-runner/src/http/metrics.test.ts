/**
 * Each runner metric moves with the query traffic it describes, read from a real scrape of the
 * runner's /metrics: executions and the duration histogram by outcome, stored-result hits, the
 * validator's and the sandbox's refusals, time-outs, oversized results, QUERY_BUSY, and the running
 * and queued gauges while one execution slot is taken.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { createTestBucket, type TestBucket } from '@uda/test-support/s3';
import { reader, settledValue } from '@uda/test-support/metrics';
import { buildFixtureDb, publishDatabase, tempPath } from '@uda/test-support/runner-fixtures';
import { postQuery, redisPrefix, runnerEnv, startInProcess, waitReady } from '@uda/test-support/runner-harness';
import { createRedisCoordination } from '../coordination-redis.ts';
import { SANDBOX_REFUSAL_MESSAGE } from '../errors.ts';
import type { StartedRunner } from '../runner.ts';

let bucket: TestBucket;
let runner: StartedRunner;
let value: ReturnType<typeof reader>;
const prefix = redisPrefix('metrics');
const dbPath = tempPath('metrics.db');

beforeAll(async () => {
  bucket = await createTestBucket('runner-metrics');
  // One execution slot, so a second query queues behind a slow one; a deadline long enough for the
  // slow query to still be running while the test looks, on a loaded machine.
  runner = await startInProcess(
    await runnerEnv(bucket.env, { REDIS_KEY_PREFIX: prefix, QUERY_TIMEOUT_MS: '4000', MAX_CONCURRENT_QUERIES: '1', QUERY_MAX_RESULT_BYTES: String(1024 * 1024) }),
  );
  await publishDatabase(bucket.store, await buildFixtureDb(dbPath, { books: 2000 }));
  await waitReady(runner.url, 60_000);
  value = reader(runner.metricsUrl);
}, 120_000);

afterAll(async () => {
  await runner.shutdown(1000);
  await bucket.remove();
  await rm(dbPath, { force: true });
});

const query = (sql: string, queryId: string = randomUUID()) => postQuery(runner.url, { queryId, sql, format: 'json' });

/** Reads every named series, runs `work`, and returns how much each moved. */
async function moved(series: [string, Record<string, string>?][], work: () => Promise<unknown>): Promise<number[]> {
  const before = await Promise.all(series.map(([name, labels]) => value(name, labels)));
  await work();
  const after = await Promise.all(series.map(([name, labels]) => value(name, labels)));
  return after.map((v, i) => v - before[i]!);
}

describe('runner metrics', () => {
  it('a new query: one execution and one duration observation with outcome ok; its re-read: one cache hit, outcome cached', async () => {
    const queryId = randomUUID();
    const first = await moved(
      [['uda_query_executions_total'], ['uda_query_duration_seconds_count', { outcome: 'ok' }], ['uda_result_cache_hits_total']],
      async () => expect((await query('SELECT title FROM gutenberg ORDER BY text_id LIMIT 2', queryId)).status).toBe(200),
    );
    expect(first).toEqual([1, 1, 0]);
    const again = await moved(
      [['uda_query_executions_total'], ['uda_query_duration_seconds_count', { outcome: 'cached' }], ['uda_result_cache_hits_total']],
      async () => expect((await query('SELECT title FROM gutenberg ORDER BY text_id LIMIT 2', queryId)).status).toBe(200),
    );
    expect(again).toEqual([0, 1, 1]);
  });

  it('a validator refusal counts by reason, and as a QUERY_INVALID duration', async () => {
    const delta = await moved(
      [['uda_validator_refusals_total', { reason: 'statement' }], ['uda_query_duration_seconds_count', { outcome: 'QUERY_INVALID' }], ['uda_query_executions_total']],
      async () => expect((await query('SELECT 1; SELECT 2')).status).toBe(400),
    );
    expect(delta).toEqual([1, 1, 0]);
  });

  it('a sandbox refusal (reading a remote file) counts once, and not as a validator refusal', async () => {
    const delta = await moved([['uda_sandbox_refusals_total'], ['uda_validator_refusals_total']], async () =>
      expect(await query("SELECT * FROM 'https://example.com/x.parquet'")).toMatchObject({ status: 400, body: { message: SANDBOX_REFUSAL_MESSAGE } }),
    );
    expect(delta).toEqual([1, 0]);
  });

  it('a result over the size limit counts as too large', async () => {
    const delta = await moved([['uda_query_too_large_total'], ['uda_query_duration_seconds_count', { outcome: 'QUERY_RESULT_TOO_LARGE' }]], async () =>
      expect((await query("SELECT repeat('x', 10000) AS big FROM range(1000)")).status).toBe(413),
    );
    expect(delta).toEqual([1, 1]);
  });

  it('a query held by another runner counts as QUERY_BUSY', async () => {
    const queryId = randomUUID();
    const other = createRedisCoordination(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', prefix);
    const held = await other.locks.acquire(queryId, 30_000);
    try {
      const delta = await moved([['uda_query_busy_total'], ['uda_query_duration_seconds_count', { outcome: 'QUERY_BUSY' }]], async () =>
        expect((await query('SELECT 1', queryId)).status).toBe(503),
      );
      expect(delta).toEqual([1, 1]);
    } finally {
      if (held.acquired) await held.lock.release();
      await other.close();
    }
  });

  it('a slow query holds the one slot (running 1) while the next waits (queued 1), then times out and counts', async () => {
    const timeoutsBefore = await value('uda_query_timeouts_total');
    const slow = query('SELECT count(*) FROM range(1000000000000)');
    expect(await settledValue(() => value('uda_queries_running'), 1)).toBe(1);
    const next = query('SELECT 42 AS answer');
    expect(await settledValue(() => value('uda_queries_queued'), 1)).toBe(1);
    expect((await slow).status).toBe(408);
    expect((await next).status).toBe(200);
    expect(await value('uda_query_timeouts_total')).toBe(timeoutsBefore + 1);
    expect(await settledValue(() => value('uda_queries_running'), 0)).toBe(0);
    expect(await value('uda_queries_queued')).toBe(0);
  });
});
