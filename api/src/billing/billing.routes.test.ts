/**
 * The billing rules as clients meet them on the real routes (DECISIONS §3, §4), each named by its
 * outcome: already-paid reads at a zero balance, the rolling 24 h export window, HEAD lookups, the
 * daily cap given back when a query never ran, and `X-Credit-Cost: 0` on errors after a refund.
 * Real PostgreSQL, Redis, S3, DuckDB runner and exporter.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ledgerOf, netCharged, openStack, type Stack } from '@uda/test-support/sql-stack';
import { queryIdOf } from '../sql/query-id.ts';
import { Manifests } from '../sql/export-version.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await openStack('billingroutes');
}, 120_000);
afterAll(() => stack.close());

const SQL = 'SELECT title FROM gutenberg ORDER BY title LIMIT 4';
const sqlPath = (format: 'csv' | 'parquet', sql = SQL) => `/api/v1/query.${format}?sql=${encodeURIComponent(sql)}`;
const json = { 'content-type': 'application/json' };

describe('billing on the routes', () => {
  it('already paid needs no credit: a query that took the balance to exactly 0 still answers HEAD, ranges and POST', async () => {
    const api = await stack.start();
    // Four open rows at $0.005: the charge takes the balance to exactly zero.
    const { accountId, apiKey } = await api.account({ tier: 'free', usd: '0.02' });
    const first = await api.get(sqlPath('parquet'), { key: apiKey });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-credit-cost')).toBe('0.02');
    expect(first.headers.get('x-credits-remaining')).toBe('0');
    await first.arrayBuffer();
    const head = await api.get(sqlPath('parquet'), { key: apiKey, method: 'HEAD' });
    expect(head.status).toBe(200);
    const range = await api.get(sqlPath('parquet'), { key: apiKey, headers: { range: 'bytes=0-3' } });
    expect(range.status).toBe(206);
    expect(Buffer.from(await range.arrayBuffer()).toString('latin1')).toBe('PAR1');
    const post = await api.get('/api/v1/query', { method: 'POST', key: apiKey, headers: json, body: JSON.stringify({ sql: SQL }) });
    expect(post.status).toBe(200);
    expect(post.headers.get('x-service-cached')).toBe('true');
    expect(post.headers.get('x-credit-cost')).toBe('0');
    // A query that would create a new charge is refused up front.
    const other = await api.get('/api/v1/query', { method: 'POST', key: apiKey, headers: json, body: JSON.stringify({ sql: 'SELECT 2 AS x' }) });
    expect(other.status).toBe(402);
    expect(await netCharged(stack.ctx, accountId)).toBe(20_000);
    await api.close();
  });

  it('already paid needs no credit: further ranges of an export paid today are served at a zero balance', async () => {
    const api = await stack.start();
    const { accountId, apiKey } = await api.account({ tier: 'free', usd: '0.1' });
    const full = await api.get('/api/v1/export/gutenberg?format=parquet', { key: apiKey });
    expect(full.headers.get('x-credit-cost')).toBe('0.1');
    expect(full.headers.get('x-credits-remaining')).toBe('0');
    await full.arrayBuffer();
    const tail = await api.get('/api/v1/export/gutenberg?format=parquet', { key: apiKey, headers: { range: 'bytes=-8' } });
    expect(tail.status).toBe(206);
    expect(tail.headers.get('x-credit-cost')).toBe('0');
    await tail.arrayBuffer();
    expect((await api.get('/api/v1/export/sec?format=parquet', { key: apiKey })).status).toBe(402);
    expect(await netCharged(stack.ctx, accountId)).toBe(100_000);
    await api.close();
  });

  it('an export window lasts 24 hours from its charge, not until UTC midnight', async () => {
    const api = await stack.start();
    const { accountId, apiKey } = await api.account({ tier: 'developer' });
    const download = async () => {
      const res = await api.get('/api/v1/export/census?format=csv', { key: apiKey });
      await res.arrayBuffer();
      return res.headers.get('x-credit-cost');
    };
    expect(await download()).toBe('0.1');
    // The charge reaches the ledger with the next flush (`ledgerOf` waits for it).
    await ledgerOf(stack.ctx, accountId);
    await stack.ctx.db('ledger').where({ account_id: accountId }).update({ created_at: stack.ctx.db.raw(`now() - interval '23 hours 59 minutes'`) });
    expect(await download()).toBe('0');
    await stack.ctx.db('ledger').where({ account_id: accountId }).update({ created_at: stack.ctx.db.raw(`now() - interval '24 hours 1 minute'`) });
    expect(await download()).toBe('0.1');
    expect(await netCharged(stack.ctx, accountId)).toBe(200_000);
    await api.close();
  });

  it('a query refused as QUERY_BUSY gives its daily-cap count back and charges nothing', async () => {
    const api = await stack.start();
    const { accountId, apiKey } = await api.account({ tier: 'developer' });
    const sql = 'SELECT count(*) AS n FROM sec_companies';
    const queryId = queryIdOf({ accountId, sql, datasets: [], exportVersion: await new Manifests(stack.bucket.store).exportVersion() });
    // Another request holds the runner's lock for this query.
    await stack.ctx.redis.set(`${stack.redisPrefix}lock:${queryId}`, 'someone-else', 'PX', 30_000);
    const busy = await api.get('/api/v1/query', { method: 'POST', key: apiKey, headers: json, body: JSON.stringify({ sql }) });
    expect(busy.status).toBe(503);
    expect(((await busy.json()) as { code: string }).code).toBe('QUERY_BUSY');
    expect(busy.headers.get('x-credit-cost')).toBe('0');
    await stack.ctx.redis.del(`${stack.redisPrefix}lock:${queryId}`);
    const ran = await api.get('/api/v1/query', { method: 'POST', key: apiKey, headers: json, body: JSON.stringify({ sql }) });
    expect(ran.status).toBe(200);
    // The busy attempt did not count: this is the day's first.
    expect(ran.headers.get('ratelimit-remaining')).toBe('999');
    expect(await ledgerOf(stack.ctx, accountId)).toHaveLength(1);
    await api.close();
  });

  it('HEAD on a lookup is not billed and takes no anonymous allowance; GET is billed', async () => {
    const api = await stack.start();
    const { accountId, apiKey } = await api.account();
    const head = await api.get('/gutenberg/war', { method: 'HEAD', key: apiKey });
    expect(head.status).toBe(200);
    expect(head.headers.get('x-credit-cost')).toBeNull();
    expect(await ledgerOf(stack.ctx, accountId)).toHaveLength(0);
    const anonymousHead = await api.get('/gutenberg/war', { method: 'HEAD' });
    expect(anonymousHead.status).toBe(200);
    const usage = (await (await api.get('/api/v1/auth/usage')).json()) as { usage: { requests_remaining: number } };
    expect(usage.usage.requests_remaining).toBe(50);
    const get = await api.get('/gutenberg/war', { key: apiKey });
    expect(Number(get.headers.get('x-credit-cost'))).toBeGreaterThan(0);
    expect(await ledgerOf(stack.ctx, accountId)).toHaveLength(1);
    await api.close();
  });

  it('an export whose object vanished answers 404 before any charge, and says X-Credit-Cost: 0', async () => {
    const api = await stack.start();
    const { accountId, apiKey } = await api.account({ tier: 'developer' });
    const manifest = (await new Manifests(stack.bucket.store).current())!;
    const file = manifest.files.find((f) => f.name === 'tables/pwc_links.csv')!;
    await stack.bucket.store.delete([file.key]);
    const res = await api.get('/api/v1/export/pwc?format=csv&table=pwc_links', { key: apiKey });
    expect(res.status).toBe(404);
    expect(res.headers.get('x-credit-cost')).toBe('0');
    expect(await ledgerOf(stack.ctx, accountId)).toHaveLength(0);
    await api.close();
  });

  it('schema-only SQL costs nothing: DESCRIBE and SHOW of a table, information_schema; SUMMARIZE is billed per row', async () => {
    const api = await stack.start();
    const { accountId, apiKey } = await api.account({ tier: 'developer' });
    const post = (sql: string) => api.get('/api/v1/query', { method: 'POST', key: apiKey, headers: json, body: JSON.stringify({ sql }) });
    for (const sql of ['DESCRIBE gutenberg', 'SHOW sec_companies', "SELECT column_name FROM information_schema.columns WHERE table_name = 'food'"]) {
      const res = await post(sql);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { row_count: number }).row_count).toBeGreaterThan(0);
      expect(res.headers.get('x-credit-cost')).toBe('0');
    }
    expect(await ledgerOf(stack.ctx, accountId)).toHaveLength(0);
    const summary = await post('SUMMARIZE census_states');
    expect(summary.status).toBe(200);
    expect(Number(summary.headers.get('x-credit-cost'))).toBeGreaterThan(0);
    await api.close();
  });
});
