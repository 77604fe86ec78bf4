import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ledgerOf, openStack, type Stack } from '@uda/test-support/sql-stack';
import { queryResponse } from './schema.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await openStack('query200');
}, 120_000);
afterAll(() => stack.close());

const SQL = 'SELECT title FROM gutenberg ORDER BY text_id LIMIT 3';
const qs = (sql: string, key: string) => `sql=${encodeURIComponent(sql)}&token=${encodeURIComponent(key)}`;

describe('SQL routes: the first request charges, the window re-reads are free', () => {
  it('POST runs and charges per row; CSV and Parquet of the same query are cached and free', async () => {
    const api = await stack.start();
    const { accountId, apiKey } = await api.account({ tier: 'free' });
    const res = await api.get('/api/v1/query', { method: 'POST', key: apiKey, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql: SQL }) });
    expect(res.status).toBe(200);
    const body = queryResponse.parse(await res.json());
    expect(body).toMatchObject({ status: 'success', row_count: 3, truncated: false, columns: [{ name: 'title' }] });
    expect(body.sql_executed).toContain('gutenberg');
    expect(res.headers.get('x-credit-cost')).toBe('0.015');
    expect(res.headers.get('x-service-cached')).toBe('false');
    expect(res.headers.get('x-service-rows-charged')).toBe('3');
    expect(JSON.parse(res.headers.get('x-service-usage')!)).toEqual({
      rows_charged: 3,
      request_cost: 0.015,
      by_source: [{ source: 'gutenberg', rows: 3, cost_per_row: 0.005, cost: 0.015 }],
    });
    const queryId = res.headers.get('x-service-query-id');
    expect(queryId).toMatch(/^[0-9a-f-]{36}$/);

    for (const path of ['/api/v1/query.csv', '/api/v1/query.parquet']) {
      const again = await fetch(`${api.url}${path}?${qs(SQL, apiKey)}`);
      expect(again.status).toBe(200);
      expect(again.headers.get('x-service-cached')).toBe('true');
      expect(again.headers.get('x-credit-cost')).toBe('0');
      expect(again.headers.get('x-service-query-id')).toBe(queryId);
      expect(again.headers.get('x-service-rows-charged')).toBe('0');
      expect(again.headers.get('x-credits-remaining')).toBe('4.985');
      expect(again.headers.get('content-range')).toBeNull();
      expect(again.headers.get('content-encoding')).toBeNull();
      // A browser saving the result gets a file name.
      expect(again.headers.get('content-disposition')).toBe(`attachment; filename="${path.slice('/api/v1/'.length)}"`);
      const bytes = Buffer.from(await again.arrayBuffer());
      expect(Number(again.headers.get('content-length'))).toBe(bytes.length);
      if (path.endsWith('.csv')) expect(bytes.toString('utf8').split('\n')[0]).toBe('title');
      else expect(again.headers.get('content-type')).toBe('application/vnd.apache.parquet');
    }
    expect((await ledgerOf(stack.ctx, accountId)).map((r) => r.kind)).toEqual(['charge']);
    const usage = await (await api.get('/api/v1/auth/usage', { key: apiKey })).json();
    expect(usage).toMatchObject({ usage: { requests_remaining: 999 } });
    await api.close();
  });

  it('HEAD of an uncached query runs and charges it; the GET that follows is free', async () => {
    const api = await stack.start();
    const { accountId, apiKey } = await api.account({ tier: 'pro' });
    const sql = 'SELECT name FROM census_states ORDER BY name LIMIT 2';
    const head = await fetch(`${api.url}/api/v1/query.parquet?${qs(sql, apiKey)}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('x-credit-cost')).toBe('0.008');
    expect(Number(head.headers.get('content-length'))).toBeGreaterThan(0);
    const get = await fetch(`${api.url}/api/v1/query.parquet?${qs(sql, apiKey)}`);
    expect(get.headers.get('x-credit-cost')).toBe('0');
    expect(get.headers.get('etag')).toBe(head.headers.get('etag'));
    expect((await ledgerOf(stack.ctx, accountId))).toHaveLength(1);
    await api.close();
  });

  it('a query that reads no table costs nothing and reports an empty by_source', async () => {
    const api = await stack.start();
    const { accountId, apiKey } = await api.account();
    const res = await api.get('/api/v1/query', { method: 'POST', key: apiKey, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql: 'SELECT 1 AS one' }) });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ rows: [{ one: 1 }], row_count: 1 });
    expect(res.headers.get('x-credit-cost')).toBe('0');
    expect(JSON.parse(res.headers.get('x-service-usage')!)).toEqual({ rows_charged: 0, request_cost: 0, by_source: [] });
    expect(await ledgerOf(stack.ctx, accountId)).toHaveLength(0);
    await api.close();
  });

  it('POST answers with the rows exactly as the query gave them, a `__proto__` column and non-ASCII text included, run and re-read alike', async () => {
    const api = await stack.start();
    const { apiKey } = await api.account();
    const sql = `SELECT 1 AS "__proto__", 'Zoë — 😀' AS "text" UNION ALL SELECT 2, 'tab\there' ORDER BY 1`;
    const post = () => api.get('/api/v1/query', { method: 'POST', key: apiKey, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql }) });
    for (const cached of ['false', 'true']) {
      const res = await post();
      expect(res.headers.get('x-service-cached')).toBe(cached);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const text = await res.text();
      expect(text).toMatch(/^\{"status":"success","row_count":2,"rows":\[\{"__proto__":1,"text":"Zoë — 😀"\},\{"__proto__":2,"text":"tab\\there"\}\],"columns":\[/);
      const body = queryResponse.parse(JSON.parse(text));
      expect(body).toMatchObject({ row_count: 2, truncated: false, columns: [{ name: '__proto__' }, { name: 'text' }] });
      expect(Object.keys(body)).toEqual(['status', 'row_count', 'rows', 'columns', 'truncated', 'sql_executed']);
    }
    await api.close();
  });

  it('a re-read of a free result takes no daily cap point (its marker is set when it is recorded): with a cap of 2, two queries and a re-read answer', async () => {
    const api = await stack.start({ limits: { exportDaily: 2 } });
    const { apiKey } = await api.account();
    const post = (sql: string) => api.get('/api/v1/query', { method: 'POST', key: apiKey, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql }) });
    const first = await post('SELECT 7 AS n');
    expect([first.status, first.headers.get('ratelimit-remaining')]).toEqual([200, '1']);
    const reread = await post('SELECT 7 AS n');
    expect([reread.status, reread.headers.get('x-service-cached'), reread.headers.get('x-credit-cost')]).toEqual([200, 'true', '0']);
    const second = await post('SELECT 8 AS n');
    expect([second.status, second.headers.get('ratelimit-remaining')]).toEqual([200, '0']);
    expect((await post('SELECT 9 AS n')).status).toBe(429);
    await api.close();
  });

  it('a paid re-read whose marker Redis lost takes the way of a new run: checked against the cap, given back, not charged again', async () => {
    const api = await stack.start({ limits: { exportDaily: 2 } });
    const { accountId, apiKey } = await api.account({ usd: '5' });
    const post = (sql: string) => api.get('/api/v1/query', { method: 'POST', key: apiKey, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql }) });
    const first = await post(SQL);
    expect([first.status, first.headers.get('x-credit-cost'), first.headers.get('ratelimit-remaining')]).toEqual([200, '0.015', '1']);
    const markers = await stack.ctx.redis.keys(`*wal-paid:${accountId}:*`);
    expect(markers).toHaveLength(1);
    await stack.ctx.redis.del(...markers);
    const reread = await post(SQL);
    expect([reread.status, reread.headers.get('x-service-cached'), reread.headers.get('x-credit-cost'), reread.headers.get('ratelimit-remaining')]).toEqual([200, 'true', '0', '1']);
    await api.services.billing.flush();
    expect((await ledgerOf(stack.ctx, accountId)).map((r) => r.kind)).toEqual(['charge']);
    await api.close();
  });
});
