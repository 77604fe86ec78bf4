/**
 * The runner answers only callers with its token: every route but the probes is 401
 * without it or with a wrong one, and the same requests with it are served.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createTestBucket, type TestBucket } from '@uda/test-support/s3';
import { buildFixtureDb, publishDatabase, tempPath } from '@uda/test-support/runner-fixtures';
import { RUNNER_AUTH, TEST_RUNNER_TOKEN, redisPrefix, runnerEnv, startInProcess, waitReady } from '@uda/test-support/runner-harness';
import type { StartedRunner } from '../runner.ts';

let bucket: TestBucket;
let runner: StartedRunner;

beforeAll(async () => {
  bucket = await createTestBucket('runner-token');
  await publishDatabase(bucket.store, await buildFixtureDb(tempPath('service.db'), { books: 20 }));
  runner = await startInProcess(await runnerEnv(bucket.env, { REDIS_KEY_PREFIX: redisPrefix('token') }));
  await waitReady(runner.url);
});

afterAll(async () => {
  await runner.shutdown(1000);
  await bucket.remove();
});

const calls = (): [string, string, unknown][] => [
  ['POST', '/v1/queries', { queryId: randomUUID(), sql: 'SELECT 1 AS n', format: 'json' }],
  ['GET', `/v1/results/${randomUUID()}/json`, undefined],
  ['POST', '/v1/lookups', { source: 'gutenberg', keywords: 'the' }],
  ['POST', '/v1/sheets/search', { key: 'sheets/none/none/1.parquet', q: 'x' }],
  ['GET', '/v1/no-such-route', undefined],
];

function send(method: string, path: string, body: unknown, headers: Record<string, string>): Promise<Response> {
  return fetch(`${runner.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

describe('runner token', () => {
  const wrong: Record<string, Record<string, string>> = {
    'no token': {},
    'a wrong token': { authorization: `Bearer ${TEST_RUNNER_TOKEN.slice(0, -1)}x` },
    'the token without Bearer': { authorization: TEST_RUNNER_TOKEN },
    'a longer token': { authorization: `Bearer ${TEST_RUNNER_TOKEN}x` },
  };
  it.each(Object.keys(wrong))('answers every runner route with 401 for %s, and runs nothing', async (label) => {
    for (const [method, path, body] of calls()) {
      const res = await send(method, path, body, wrong[label]!);
      expect([method, path, res.status]).toEqual([method, path, 401]);
      expect(await res.json()).toEqual({ code: 'UNAUTHORIZED', message: 'Runner token missing or wrong.' });
    }
  });

  it('serves the same requests with the token', async () => {
    const query = await send('POST', '/v1/queries', calls()[0]![2], RUNNER_AUTH);
    expect(query.status).toBe(200);
    // This fixture has no lookup index: the runner's own answer (not a 401) shows the token passed.
    expect((await send('POST', '/v1/lookups', calls()[2]![2], RUNNER_AUTH)).status).not.toBe(401);
    expect((await send('GET', `/v1/results/${randomUUID()}/json`, undefined, RUNNER_AUTH)).status).toBe(404);
  });

  it('leaves the health, readiness and metrics probes open', async () => {
    expect((await fetch(`${runner.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${runner.url}/readyz`)).status).toBe(200);
    expect((await fetch(runner.metricsUrl)).status).toBe(200);
  });
});
