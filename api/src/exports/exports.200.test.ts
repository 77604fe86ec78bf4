/**
 * Export downloads from the object store with real clients: billing once per file version per
 * window, free HEAD and ranges, a refunded abort that does not make later downloads free, a pinned
 * older version, and hyparquet and curl reading the files over range requests.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { curl, readParquetOverHttp } from '../../test/support/http-clients.ts';
import { buildExport, ledgerOf, netCharged, openStack, type Stack } from '@uda/test-support/sql-stack';
import { Manifests } from '../sql/export-version.ts';

let stack: Stack;
let firstVersion: string;
beforeAll(async () => {
  stack = await openStack('exports200');
  firstVersion = (await new Manifests(stack.bucket.store).current())!.version;
  // A second export makes the first an older kept version.
  await buildExport(stack.bucket.env);
}, 120_000);
afterAll(() => stack.close());

/** Starts a download and cuts it as soon as its first bytes arrive. */
function abortAfterFirstBytes(url: string, apiKey: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const req = request(url, { headers: { authorization: `Bearer ${apiKey}` } }, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve();
      });
    });
    req.on('error', () => undefined);
    req.once('response', (res) => res.once('error', reject));
    req.end();
  });
}

const withToken = (path: string, key: string) => `${path}${path.includes('?') ? '&' : '?'}token=${encodeURIComponent(key)}`;

describe('export routes', () => {
  it('charges a bulk file once per window: HEAD and ranges free, every header present', async () => {
    const api = await stack.start();
    const { accountId, apiKey } = await api.account({ tier: 'developer' });
    const head = await api.get('/api/v1/export/service.parquet.zip', { method: 'HEAD', key: apiKey });
    expect(head.status).toBe(200);
    expect(head.headers.get('x-credit-cost')).toBe('0');
    const get = await api.get('/api/v1/export/service.parquet.zip', { key: apiKey });
    expect(get.status).toBe(200);
    const bytes = Buffer.from(await get.arrayBuffer());
    expect(bytes.subarray(0, 2).toString('latin1')).toBe('PK');
    expect(Number(get.headers.get('content-length'))).toBe(bytes.length);
    expect(get.headers.get('content-disposition')).toBe('attachment; filename="service.parquet.zip"');
    expect(get.headers.get('etag')).toBe(head.headers.get('etag'));
    expect(get.headers.get('x-service-success')).toBe('true');
    expect(get.headers.get('x-service-message')).toContain('succeeded');
    expect(get.headers.get('ratelimit-remaining')).toBe('999');
    expect(get.headers.get('x-credit-cost')).toBe('1');
    const range = await api.get('/api/v1/export/service.parquet.zip', { key: apiKey, headers: { Range: 'bytes=0-1' } });
    expect(range.status).toBe(206);
    expect(range.headers.get('x-credit-cost')).toBe('0');
    expect(range.headers.get('ratelimit-remaining')).toBe('999');
    expect(await netCharged(stack.ctx, accountId)).toBe(1_000_000);
    const metrics = await api.services.metrics.registry.metrics();
    expect(metrics).toContain('uda_credits_charged_micro_usd_total{tier="developer",price_class="export"} 1000000');
    await api.close();
  });

  it('one source: csv by default, the primary table unless ?table= names another, Pro pays 20% less', async () => {
    const api = await stack.start();
    const { accountId, apiKey } = await api.account({ tier: 'pro' });
    const csv = await api.get('/api/v1/export/census', { key: apiKey });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-disposition')).toBe('attachment; filename="census_states.csv"');
    expect((await csv.text()).split('\n')[0]).toContain('name');
    expect(csv.headers.get('x-credit-cost')).toBe('0.08');
    const other = await api.get('/api/v1/export/census?format=parquet&table=census_counties', { key: apiKey });
    expect(other.headers.get('content-disposition')).toBe('attachment; filename="census_counties.parquet"');
    await other.arrayBuffer();
    expect(await netCharged(stack.ctx, accountId)).toBe(160_000);
    await api.close();
  });

  it('?version= pins a kept older version', async () => {
    const api = await stack.start();
    const { apiKey } = await api.account();
    const res = await api.get(`/api/v1/export/gutenberg?format=parquet&version=${firstVersion}`, { key: apiKey });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-service-message')).toContain(firstVersion);
    const current = await api.get('/api/v1/export/gutenberg?format=parquet', { key: apiKey });
    expect(current.headers.get('x-service-message')).not.toContain(firstVersion);
    await Promise.all([res.arrayBuffer(), current.arrayBuffer()]);
    await api.close();
  });

  it('an aborted download is refunded, and the next download is charged again', async () => {
    const api = await stack.start();
    const { accountId, apiKey } = await api.account();
    await abortAfterFirstBytes(`${api.url}/api/v1/export/service.db`, apiKey);
    for (let i = 0; i < 200 && (await ledgerOf(stack.ctx, accountId)).length < 2; i++) await new Promise((r) => setTimeout(r, 25));
    expect((await ledgerOf(stack.ctx, accountId)).map((r) => r.kind)).toEqual(['charge', 'refund']);
    expect(await netCharged(stack.ctx, accountId)).toBe(0);
    const full = await api.get('/api/v1/export/service.db', { key: apiKey });
    expect(full.headers.get('x-credit-cost')).toBe('1');
    await full.arrayBuffer();
    const again = await api.get('/api/v1/export/service.db', { key: apiKey });
    expect(again.headers.get('x-credit-cost')).toBe('0');
    await again.arrayBuffer();
    expect(await netCharged(stack.ctx, accountId)).toBe(1_000_000);
    await api.close();
  });

  it('an aborted download of a file the pod has cached is refunded too', async () => {
    const api = await stack.start();
    const first = await api.account();
    // A whole download puts the file in this API's disk cache; the next account's comes from it.
    await (await api.get('/api/v1/export/service.db', { key: first.apiKey })).arrayBuffer();
    const { accountId, apiKey } = await api.account();
    await abortAfterFirstBytes(`${api.url}/api/v1/export/service.db`, apiKey);
    for (let i = 0; i < 200 && (await ledgerOf(stack.ctx, accountId)).length < 2; i++) await new Promise((r) => setTimeout(r, 25));
    expect((await ledgerOf(stack.ctx, accountId)).map((r) => r.kind)).toEqual(['charge', 'refund']);
    expect(await netCharged(stack.ctx, accountId)).toBe(0);
    await api.close();
  });

  it('hyparquet reads /export/{source}?format=parquet over range requests, charged once, every row', async () => {
    const api = await stack.start();
    const { accountId, apiKey } = await api.account();
    const { rows, requests } = await readParquetOverHttp(`${api.url}${withToken('/api/v1/export/food?format=parquet', apiKey)}`);
    expect(requests.filter((r) => r.status === 206).length).toBeGreaterThanOrEqual(2);
    const manifest = (await new Manifests(stack.bucket.store).current())!;
    expect(rows).toHaveLength(manifest.tables.food!.rows);
    const sql = await api.get('/api/v1/query', { method: 'POST', key: apiKey, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql: 'SELECT fdc_id FROM food ORDER BY fdc_id LIMIT 5' }) });
    const ids = ((await sql.json()) as { rows: { fdc_id: number }[] }).rows.map((r) => Number(r.fdc_id));
    expect(rows.map((r) => Number(r.fdc_id)).sort((a, b) => a - b).slice(0, 5)).toEqual(ids);
    const exportCharges = (await ledgerOf(stack.ctx, accountId)).filter((r) => r.idempotency_key.startsWith('export:'));
    expect(exportCharges.map((r) => Number(r.amount_micro))).toEqual([100_000]);
    await api.close();
  });

  it('curl --range, -r -100 and -I against every file route', async () => {
    const api = await stack.start();
    const { apiKey } = await api.account();
    for (const path of ['/api/v1/export/service.db', '/api/v1/export/service.parquet.zip', '/api/v1/export/service.csv.zip', '/api/v1/export/sec?format=csv', '/api/v1/export/sec?format=parquet']) {
      const url = `${api.url}${withToken(path, apiKey)}`;
      const head = await curl(url, ['-I']);
      expect(head.status).toBe(200);
      const size = Number(head.headers['content-length']);
      expect(size).toBeGreaterThan(100);
      for (const name of ['etag', 'content-disposition', 'x-service-success', 'x-service-message', 'ratelimit-remaining']) expect(head.headers[name]).toBeTruthy();
      const first = await curl(url, ['--range', '0-9']);
      expect([first.status, first.headers['content-range'], first.body.length]).toEqual([206, `bytes 0-9/${size}`, 10]);
      const tail = await curl(url, ['-r', '-100']);
      expect([tail.status, tail.headers['content-range'], tail.body.length]).toEqual([206, `bytes ${size - 100}-${size - 1}/${size}`, 100]);
      expect(tail.headers.etag).toBe(head.headers.etag);
    }
    await api.close();
  });
});
