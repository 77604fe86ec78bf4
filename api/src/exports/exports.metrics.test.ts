/**
 * The file-serving metrics move with the downloads they describe: `uda_export_bytes_streamed_total`
 * by the body bytes of each export and result file sent, `uda_object_cache_lookups_total{outcome}`
 * and `uda_object_cache_bytes` as the pod's disk cache misses, fills and hits, and
 * `uda_refunds_total` when a cut download is refunded.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ledgerOf, openStack, type Stack } from '@uda/test-support/sql-stack';
import { reader, settledValue } from '@uda/test-support/metrics';

let stack: Stack;
beforeAll(async () => {
  stack = await openStack('exportsMetrics');
}, 120_000);
afterAll(() => stack.close());

const MB = 1024 * 1024;

/** Starts a download and cuts it as soon as its first bytes arrive. */
function abortAfterFirstBytes(url: string, apiKey: string): Promise<void> {
  return new Promise<void>((resolve) => {
    const req = request(url, { headers: { authorization: `Bearer ${apiKey}` } }, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve();
      });
      res.on('error', () => undefined);
    });
    req.on('error', () => undefined);
    req.end();
  });
}

describe('uda_export_bytes_streamed_total', () => {
  it('moves by the bytes of a whole export download (over 1 MB), and not for a HEAD', async () => {
    const api = await stack.start();
    const value = reader(api.services.metrics.registry);
    const { apiKey } = await api.account({ tier: 'developer' });
    expect((await api.get('/api/v1/export/service.db', { method: 'HEAD', key: apiKey })).status).toBe(200);
    expect(await value('uda_export_bytes_streamed_total')).toBe(0);
    const res = await api.get('/api/v1/export/service.db', { key: apiKey });
    const body = Buffer.from(await res.arrayBuffer());
    expect(res.status).toBe(200);
    expect(body.length).toBeGreaterThan(MB);
    expect(await settledValue(() => value('uda_export_bytes_streamed_total'), body.length)).toBe(body.length);
    await api.close();
  });

  it('moves by the bytes of a range, and of a SQL result file', async () => {
    const api = await stack.start();
    const value = reader(api.services.metrics.registry);
    const { apiKey } = await api.account({ tier: 'developer' });
    const range = await api.get('/api/v1/export/service.db', { key: apiKey, headers: { Range: 'bytes=100-1123' } });
    expect(range.status).toBe(206);
    expect((await range.arrayBuffer()).byteLength).toBe(1024);
    expect(await settledValue(() => value('uda_export_bytes_streamed_total'), 1024)).toBe(1024);
    const sql = encodeURIComponent('SELECT text_id, title FROM gutenberg ORDER BY text_id LIMIT 3');
    const csv = await api.get(`/api/v1/query.csv?sql=${sql}`, { key: apiKey });
    const text = Buffer.from(await csv.arrayBuffer());
    expect(csv.status).toBe(200);
    expect(await settledValue(() => value('uda_export_bytes_streamed_total'), 1024 + text.length)).toBe(1024 + text.length);
    await api.close();
  });
});

describe('uda_object_cache_lookups_total and uda_object_cache_bytes', () => {
  it('a first whole download misses and fills the cache with the file, the next one hits', async () => {
    const api = await stack.start();
    const value = reader(api.services.metrics.registry);
    const { apiKey } = await api.account({ tier: 'developer' });
    expect(await value('uda_object_cache_bytes')).toBe(0);
    const first = Buffer.from(await (await api.get('/api/v1/export/census', { key: apiKey })).arrayBuffer());
    expect(await value('uda_object_cache_lookups_total', { outcome: 'miss' })).toBe(1);
    expect(await settledValue(() => value('uda_object_cache_bytes'), first.length)).toBe(first.length);
    await (await api.get('/api/v1/export/census', { key: apiKey })).arrayBuffer();
    expect(await value('uda_object_cache_lookups_total', { outcome: 'hit' })).toBe(1);
    expect(await value('uda_object_cache_lookups_total', { outcome: 'miss' })).toBe(1);
    await api.close();
  });
});

describe('uda_refunds_total', () => {
  it('moves by one when a cut download is refunded', async () => {
    const api = await stack.start();
    const value = reader(api.services.metrics.registry);
    const { accountId, apiKey } = await api.account();
    await abortAfterFirstBytes(`${api.url}/api/v1/export/service.db`, apiKey);
    for (let i = 0; i < 600 && (await ledgerOf(stack.ctx, accountId)).length < 2; i++) await new Promise((r) => setTimeout(r, 25));
    expect((await ledgerOf(stack.ctx, accountId)).map((r) => r.kind)).toEqual(['charge', 'refund']);
    expect(await value('uda_refunds_total')).toBe(1);
    await api.close();
  });
});
