/**
 * Fault tests: a runner killed mid-query, and an object store that cannot be reached. The caller
 * gets a 503 with Retry-After, nothing is charged, and the retry works once the backend is back.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { counterValue } from '@uda/test-support/runner-harness';
import type { TestApi } from '@uda/test-support/api-harness';
import { ledgerOf, openStack, type Stack } from '@uda/test-support/sql-stack';
import { reader } from '@uda/test-support/metrics';

let stack: Stack;
beforeAll(async () => {
  // Two runners, so the id's next runner takes over; a short lock life, so a dead runner's lock goes quickly.
  stack = await openStack('queryfaults', { runners: 2, runnerEnv: { QUERY_LOCK_TTL_MS: '1500' } });
}, 120_000);
afterAll(() => stack.close());

const post = (api: TestApi, key: string, sql: string) =>
  api.get('/api/v1/query', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql }) });

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('SQL routes when the backend fails', () => {
  it('a runner killed mid-query: 503 QUERY_BACKEND_UNAVAILABLE, no charge, and the retry works', async () => {
    const api = await stack.start();
    const { accountId, apiKey } = await api.account();
    const sql = 'SELECT sum(hash(i)) AS h FROM range(400000000) r(i)';
    const pending = post(api, apiKey, sql);
    let victim: (typeof stack.runners)[number] | undefined;
    while (!victim) {
      for (const runner of stack.runners) {
        if ((await counterValue(runner.metricsUrl, 'uda_queries_running')) > 0) victim = runner;
      }
      await pause(10);
    }
    victim.child.kill('SIGKILL');
    const failed = await pending;
    expect(failed.status).toBe(503);
    expect(await failed.json()).toMatchObject({ status: 'error', code: 'QUERY_BACKEND_UNAVAILABLE' });
    expect(Number(failed.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await ledgerOf(stack.ctx, accountId)).toHaveLength(0);
    // What the UdaQueryBackendUnavailable alert reads: one request lost to the kill.
    expect(await reader(api.services.metrics.registry)('uda_query_backend_unavailable_total')).toBe(1);

    // The dead runner's lock expires; until then the survivor answers QUERY_BUSY.
    let retry = await post(api, apiKey, sql);
    for (let i = 0; i < 100 && retry.status === 503; i++) {
      expect(((await retry.json()) as { code: string }).code).toBe('QUERY_BUSY');
      await pause(100);
      retry = await post(api, apiKey, sql);
    }
    expect(retry.status).toBe(200);
    expect(await ledgerOf(stack.ctx, accountId)).toHaveLength(0);
    await api.close();
  });

  it('an unreachable object store: 503 with Retry-After on SQL and export routes, nothing charged', async () => {
    const api = await stack.start({ config: { S3_ENDPOINT: 'http://127.0.0.1:9' } });
    const { accountId, apiKey } = await api.account();
    const query = await post(api, apiKey, 'SELECT title FROM gutenberg LIMIT 1');
    expect(query.status).toBe(503);
    expect(await query.json()).toMatchObject({ status: 'error', code: 'QUERY_BACKEND_UNAVAILABLE' });
    expect(query.headers.get('retry-after')).toBeTruthy();
    const file = await api.get('/api/v1/export/service.db', { key: apiKey });
    expect(file.status).toBe(503);
    expect(await file.json()).toEqual({ status: 'error', message: 'The export store is temporarily unavailable. Nothing was charged; please retry.' });
    expect(await ledgerOf(stack.ctx, accountId)).toHaveLength(0);
    await api.close();
  });
});
