/**
 * Export route failures: clear 400s for what the caller asked wrongly, 404 for a version that is not
 * kept, and the 401 / 402 / 429 of a metered key-required route. None is charged.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ledgerOf, netCharged, openStack, type Stack } from '@uda/test-support/sql-stack';

let stack: Stack;
beforeAll(async () => {
  stack = await openStack('exportserr', { runners: 0 });
}, 120_000);
afterAll(() => stack.close());

describe('export routes: errors', () => {
  it('400 for an unknown source, format or table, or a malformed version; 404 for a version not kept', async () => {
    const api = await stack.start();
    const { accountId, apiKey } = await api.account();
    const cases: [string, number, string][] = [
      ['/api/v1/export/nosuch', 400, 'Unknown export "nosuch"'],
      ['/api/v1/export/food?format=xlsx', 400, 'Unsupported format "xlsx"'],
      ['/api/v1/export/food?table=census_states', 400, 'Its tables: food, food_nutrients, food_nutrient_types'],
      ['/api/v1/export/service.db?version=latest', 400, 'Malformed version'],
      ['/api/v1/export/service.db?version=20200101T000000000Z-abcdef', 404, 'is not kept'],
    ];
    for (const [path, status, message] of cases) {
      const res = await api.get(path, { key: apiKey });
      expect(res.status).toBe(status);
      const body = (await res.json()) as { status: string; message: string };
      expect(body.status).toBe('error');
      expect(body.message).toContain(message);
    }
    expect(await ledgerOf(stack.ctx, accountId)).toHaveLength(0);
    await api.close();
  });

  it("404 for DuckDB's write-ahead-log probe next to service.db, uncharged", async () => {
    const api = await stack.start();
    const { accountId, apiKey } = await api.account();
    for (const method of ['HEAD', 'GET']) {
      const res = await api.get('/api/v1/export/service.db.wal', { method, key: apiKey });
      expect(res.status).toBe(404);
      if (method === 'GET') expect(await res.json()).toMatchObject({ status: 'error', message: expect.stringContaining('service.db.wal') });
    }
    expect(await ledgerOf(stack.ctx, accountId)).toHaveLength(0);
    await api.close();
  });

  it('412 for a stale If-Match, 304 for an If-Modified-Since after the build: neither is charged', async () => {
    const api = await stack.start();
    const { accountId, apiKey } = await api.account();
    const head = await api.get('/api/v1/export/gutenberg?format=parquet', { method: 'HEAD', key: apiKey });
    const stale = await api.get('/api/v1/export/gutenberg?format=parquet', { key: apiKey, headers: { Range: 'bytes=0-3', 'If-Match': '"old"' } });
    expect(stale.status).toBe(412);
    expect(stale.headers.get('x-credit-cost')).toBe('0');
    expect(await ledgerOf(stack.ctx, accountId)).toHaveLength(0);
    const later = new Date(Date.parse(head.headers.get('last-modified')!) + 60_000).toUTCString();
    const unchanged = await api.get('/api/v1/export/gutenberg?format=parquet', { key: apiKey, headers: { 'If-Modified-Since': later } });
    expect(unchanged.status).toBe(304);
    expect(await netCharged(stack.ctx, accountId)).toBe(0);
    await api.close();
  });

  it('401 without a key; 402 at zero balance and when the balance is below the price', async () => {
    const api = await stack.start();
    const anonymous = await api.get('/api/v1/export/service.db');
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toEqual({ status: 'error', message: 'Authentication required. Include your API key in the Authorization header.' });
    const zero = await api.account({ usd: '0' });
    expect((await api.get('/api/v1/export/service.db', { key: zero.apiKey })).status).toBe(402);
    const poor = await api.account({ usd: '0.5' });
    const res = await api.get('/api/v1/export/service.db', { key: poor.apiKey });
    expect(res.status).toBe(402);
    expect(await res.json()).toMatchObject({ error: 'insufficient_credit', credits: { remaining_usd: 0.5, request_cost_usd: 1 } });
    expect(await ledgerOf(stack.ctx, poor.accountId)).toHaveLength(0);
    await api.close();
  });

  it('429 on a newly charged download once the daily cap is spent; in-window re-downloads still answer', async () => {
    const api = await stack.start({ limits: { exportDaily: 1 } });
    const { apiKey } = await api.account();
    expect((await api.get('/api/v1/export/gutenberg', { key: apiKey })).status).toBe(200);
    expect((await api.get('/api/v1/export/gutenberg', { key: apiKey })).status).toBe(200);
    const res = await api.get('/api/v1/export/sec', { key: apiKey });
    expect(res.status).toBe(429);
    expect(await res.json()).toEqual({ status: 'error', message: 'Export rate limit exceeded. Maximum 1,000 exports per day per account.' });
    expect(res.headers.get('retry-after')).toBeTruthy();
    await api.close();
  });
});
