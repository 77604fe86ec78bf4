/**
 * Every failure of the SQL routes: the spec's status and flat body, nothing charged, and for the
 * validator's refusals no runner call at all.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestApi } from '@uda/test-support/api-harness';
import { ledgerOf, openStack, type Stack } from '@uda/test-support/sql-stack';

let stack: Stack;
beforeAll(async () => {
  // A short time limit and a small size limit make 408 and 413 quick to reach.
  stack = await openStack('queryerr', { runnerEnv: { QUERY_TIMEOUT_MS: '1500', QUERY_MAX_RESULT_BYTES: '65536' } });
}, 120_000);
afterAll(() => stack.close());

const post = (api: TestApi, key: string | undefined, body: unknown) =>
  api.get('/api/v1/query', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('SQL routes: errors are flat, coded and never charged', () => {
  it('400 QUERY_INVALID from the validator before any runner call, on every route', async () => {
    const api = await stack.start();
    const { accountId, apiKey } = await api.account();
    const before = await stack.executions();
    const cases: [unknown, string][] = [
      [{ sql: 'DROP TABLE gutenberg' }, 'Disallowed operation: DROP'],
      [{ sql: 'EXPLAIN SELECT 1' }, 'Only SELECT statements are allowed.'],
      [{ sql: 'x'.repeat(10_001) }, ''],
      [{}, ''],
    ];
    for (const [body, message] of cases) {
      const res = await post(api, apiKey, body);
      expect(res.status).toBe(400);
      const json = (await res.json()) as { status: string; code: string; message: string };
      expect(json).toMatchObject({ status: 'error', code: 'QUERY_INVALID' });
      expect(json.message).toContain(message);
    }
    const csv = await api.get(`/api/v1/query.csv?sql=${encodeURIComponent("SELECT 'drop'")}`, { key: apiKey });
    expect(csv.status).toBe(400);
    expect(await csv.json()).toEqual({ status: 'error', code: 'QUERY_INVALID', message: 'Disallowed operation: DROP' });
    expect(await stack.executions()).toBe(before);
    expect(await ledgerOf(stack.ctx, accountId)).toHaveLength(0);
    await api.close();
  });

  it('a request refused before its handler\'s Redis call (no key, bad JSON, bad SQL) still counts toward the burst limit, whose 429 comes first', async () => {
    const api = await stack.start({ limits: { burst: { points: 3, windowS: 900 } } });
    const { accountId, apiKey } = await api.account();
    expect((await post(api, undefined, { sql: 'SELECT 1' })).status).toBe(401);
    const notJson = await api.get('/api/v1/query', { method: 'POST', key: apiKey, headers: { 'content-type': 'application/json' }, body: '{"sql"' });
    expect(notJson.status).toBe(400);
    expect((await post(api, apiKey, { sql: 'DROP TABLE gutenberg' })).status).toBe(400);
    // The window's three are spent: the burst limit refuses a bad text and a good one alike.
    for (const sql of ['DROP TABLE gutenberg', 'SELECT text_id FROM gutenberg LIMIT 1']) {
      const refused = await post(api, apiKey, { sql });
      expect(refused.status).toBe(429);
      expect(await refused.json()).toMatchObject({ data: { code: 'RATE_LIMITED' } });
    }
    expect(await ledgerOf(stack.ctx, accountId)).toHaveLength(0);
    await api.close();
  });

  it('400 QUERY_INVALID in the flat shape for a body that is not JSON', async () => {
    const api = await stack.start();
    const { accountId, apiKey } = await api.account();
    const res = await api.get('/api/v1/query', { method: 'POST', key: apiKey, headers: { 'content-type': 'application/json' }, body: '{"sql": "SELECT 1"' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ status: 'error', code: 'QUERY_INVALID', message: 'The request body is not valid JSON.' });
    expect(await ledgerOf(stack.ctx, accountId)).toHaveLength(0);
    await api.close();
  });

  it('400 QUERY_INVALID for an engine error in a valid SELECT', async () => {
    const api = await stack.start();
    const { apiKey } = await api.account();
    const res = await post(api, apiKey, { sql: 'SELECT no_such_column FROM gutenberg' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ status: 'error', code: 'QUERY_INVALID' });
    await api.close();
  });

  it('408 QUERY_TIMEOUT and 413 QUERY_RESULT_TOO_LARGE, not charged', async () => {
    const api = await stack.start();
    const { accountId, apiKey } = await api.account();
    const slow = await post(api, apiKey, { sql: 'SELECT count(*) FROM range(1000000) a, range(1000000) b' });
    expect(slow.status).toBe(408);
    expect(await slow.json()).toMatchObject({ status: 'error', code: 'QUERY_TIMEOUT' });
    const big = await api.get(`/api/v1/query.parquet?sql=${encodeURIComponent("SELECT repeat(md5(i::VARCHAR), 40) AS t FROM range(1000) r(i)")}`, { key: apiKey });
    expect(big.status).toBe(413);
    expect(await big.json()).toMatchObject({ status: 'error', code: 'QUERY_RESULT_TOO_LARGE' });
    expect(await ledgerOf(stack.ctx, accountId)).toHaveLength(0);
    await api.close();
  });

  it('401 without a key, with the spec message', async () => {
    const api = await stack.start();
    for (const res of [await post(api, undefined, { sql: 'SELECT 1' }), await api.get('/api/v1/query.parquet?sql=SELECT%201')]) {
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ status: 'error', message: 'Authentication required. Include your API key in the Authorization header.' });
    }
    await api.close();
  });

  it('402 up front at zero balance, and after the result when it costs more than the balance', async () => {
    const api = await stack.start();
    const broke = await api.account({ usd: '0' });
    const zero = await post(api, broke.apiKey, { sql: 'SELECT 1' });
    expect(zero.status).toBe(402);
    expect(await zero.json()).toMatchObject({ status: 'error', error: 'insufficient_credit', credits: { remaining_usd: 0 } });
    const poor = await api.account({ usd: '0.01' });
    const costly = await post(api, poor.apiKey, { sql: 'SELECT title FROM gutenberg LIMIT 5' });
    expect(costly.status).toBe(402);
    expect(await costly.json()).toMatchObject({ credits: { remaining_usd: 0.01, request_cost_usd: 0.025 } });
    expect(await ledgerOf(stack.ctx, poor.accountId)).toHaveLength(0);
    await api.close();
  });

  it('403 naming the dataset when datasetIds or datasets names a sheet the caller cannot use', async () => {
    const api = await stack.start();
    const { apiKey } = await api.account();
    const res = await post(api, apiKey, { sql: 'SELECT 1', datasetIds: ['my-sheet'] });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { message: string }).message).toContain('my-sheet');
    const get = await api.get('/api/v1/query.csv?sql=SELECT%201&datasets=a,b', { key: apiKey });
    expect(get.status).toBe(403);
    await api.close();
  });

  it('429 once the daily cap is spent; cached re-reads do not count and still answer', async () => {
    const api = await stack.start({ limits: { exportDaily: 1 } });
    const { apiKey } = await api.account();
    expect((await post(api, apiKey, { sql: 'SELECT 41' })).status).toBe(200);
    const reread = await post(api, apiKey, { sql: 'SELECT 41' });
    expect(reread.status).toBe(200);
    expect(reread.headers.get('x-service-cached')).toBe('true');
    const res = await post(api, apiKey, { sql: 'SELECT 42' });
    expect(res.status).toBe(429);
    expect(await res.json()).toEqual({ status: 'error', message: 'Export rate limit exceeded. Maximum 1,000 exports per day per account.' });
    expect(res.headers.get('retry-after')).toBeTruthy();
    expect(res.headers.get('ratelimit-remaining')).toBe('0');
    await api.close();
  });

  it('a paid re-read is decided before the daily cap: at the cap it counts no rejection, and a new query still gets the 429', async () => {
    const api = await stack.start({ limits: { exportDaily: 1 } });
    const { apiKey } = await api.account();
    const sql = 'SELECT title FROM gutenberg ORDER BY text_id LIMIT 1';
    expect((await post(api, apiKey, { sql })).status).toBe(200);
    const before = await exportCapRejections(api);
    const reread = await post(api, apiKey, { sql });
    expect(reread.status).toBe(200);
    expect(reread.headers.get('x-service-cached')).toBe('true');
    expect(await exportCapRejections(api)).toBe(before);
    expect((await post(api, apiKey, { sql: 'SELECT title FROM gutenberg ORDER BY text_id LIMIT 2' })).status).toBe(429);
    expect(await exportCapRejections(api)).toBe(before + 1);
    await api.close();
  });
});

/** Requests the export/SQL daily cap refused, as the API's metrics count them. */
async function exportCapRejections(api: TestApi): Promise<number> {
  const { values } = await api.services.metrics.rateLimitRejections.get();
  return values.find((v) => v.labels.kind === 'export_daily')?.value ?? 0;
}
