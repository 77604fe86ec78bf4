/**
 * Real clients against the SQL file routes: hyparquet over range requests, curl, the request
 * sequence of DuckDB's httpfs, and 20 concurrent identical queries.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestApi } from '@uda/test-support/api-harness';
import { curl, readParquetOverHttp } from '../../test/support/http-clients.ts';
import { ledgerOf, openStack, type Stack } from '@uda/test-support/sql-stack';

let stack: Stack;
beforeAll(async () => {
  stack = await openStack('queryclients');
}, 120_000);
afterAll(() => stack.close());

const fileUrl = (api: TestApi, format: string, sql: string, key: string) =>
  `${api.url}/api/v1/query.${format}?sql=${encodeURIComponent(sql)}&token=${encodeURIComponent(key)}`;

describe('SQL file routes with real clients', () => {
  it('a 10,000-character SQL fits in the GET URL even when every character encodes to 9 bytes; a larger URL gets a JSON 431 with CORS', async () => {
    const api = await stack.start();
    const { apiKey } = await api.account();
    const prefix = "SELECT length('";
    const suffix = "') AS n";
    const filler = 10_000 - prefix.length - suffix.length;
    const sql = `${prefix}${'中'.repeat(filler)}${suffix}`;
    expect(sql.length).toBe(10_000);
    const ok = await fetch(fileUrl(api, 'csv', sql, apiKey), { headers: { origin: 'http://page.example' } });
    expect(ok.status).toBe(200);
    expect((await ok.text()).trim().split('\n')).toEqual(['n', String(filler)]);

    const tooLong = await fetch(fileUrl(api, 'csv', `${prefix}${'中'.repeat(15_000)}${suffix}`, apiKey), { headers: { origin: 'http://page.example' } });
    expect(tooLong.status).toBe(431);
    expect(tooLong.headers.get('access-control-allow-origin')).toBe('*');
    expect(tooLong.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await tooLong.json()).toEqual({ status: 'error', message: expect.stringContaining('POST /api/v1/query') });
    await api.close();
  });

  it('hyparquet reads the Parquet result over several range requests, charged once, same rows as JSON', async () => {
    const api = await stack.start();
    const { accountId, apiKey } = await api.account();
    const sql = 'SELECT text_id::INTEGER AS id, title FROM gutenberg ORDER BY text_id LIMIT 40';
    const { rows, requests } = await readParquetOverHttp(fileUrl(api, 'parquet', sql, apiKey));
    expect(requests[0]!.method).toBe('HEAD');
    expect(requests.filter((r) => r.range && r.status === 206).length).toBeGreaterThanOrEqual(2);
    const json = await api.get('/api/v1/query', { method: 'POST', key: apiKey, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql }) });
    expect(json.headers.get('x-service-cached')).toBe('true');
    expect(rows).toEqual(((await json.json()) as { rows: unknown[] }).rows);
    const ledger = await ledgerOf(stack.ctx, accountId);
    expect(ledger.map((r) => [r.kind, Number(r.amount_micro)])).toEqual([['charge', 40 * 5_000]]);
    await api.close();
  });

  it('curl --range, -r -100 and -I on both file routes: exact 206s, HEAD without body, stable ETag', async () => {
    const api = await stack.start();
    const { apiKey } = await api.account();
    for (const format of ['csv', 'parquet']) {
      const url = fileUrl(api, format, 'SELECT text_id, title FROM gutenberg ORDER BY text_id LIMIT 200', apiKey);
      const head = await curl(url, ['-I']);
      expect(head.status).toBe(200);
      expect(head.body.length).toBe(0);
      const size = Number(head.headers['content-length']);
      for (const header of ['etag', 'last-modified', 'x-credit-cost', 'x-credits-remaining', 'x-service-cached', 'x-service-query-id', 'x-service-rows-charged', 'x-service-usage']) {
        expect(head.headers[header]).toBeTruthy();
      }
      expect(head.headers['accept-ranges']).toBe('bytes');
      const first = await curl(url, ['--range', '0-9']);
      expect(first.status).toBe(206);
      expect(first.headers['content-range']).toBe(`bytes 0-9/${size}`);
      expect(first.body.length).toBe(10);
      const tail = await curl(url, ['-r', '-100']);
      expect(tail.status).toBe(206);
      expect(tail.headers['content-range']).toBe(`bytes ${size - 100}-${size - 1}/${size}`);
      expect(tail.body.length).toBe(100);
      const open = await curl(url, ['--range', `${size - 5}-`]);
      expect(open.headers['content-range']).toBe(`bytes ${size - 5}-${size - 1}/${size}`);
      for (const res of [first, tail, open]) {
        expect(res.headers.etag).toBe(head.headers.etag);
        expect(res.headers['x-service-cached']).toBe('true');
        expect(res.headers['content-encoding']).toBeUndefined();
      }
    }
    await api.close();
  });

  it("replays DuckDB httpfs: HEAD, suffix and bounded range GETs, every header it checks, 416 past the end", async () => {
    const api = await stack.start();
    const { accountId, apiKey } = await api.account();
    const url = fileUrl(api, 'parquet', 'SELECT * FROM food ORDER BY fdc_id LIMIT 25', apiKey);
    const head = await fetch(url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    const size = Number(head.headers.get('content-length'));
    const etag = head.headers.get('etag')!;
    expect(etag).toMatch(/^"[^"]+"$/);
    expect(head.headers.get('accept-ranges')).toBe('bytes');
    expect(Number.isNaN(Date.parse(head.headers.get('last-modified')!))).toBe(false);
    const footer = await fetch(url, { headers: { Range: 'bytes=-8' } });
    expect(footer.status).toBe(206);
    const magic = Buffer.from(await footer.arrayBuffer());
    expect(magic.subarray(4).toString('latin1')).toBe('PAR1');
    const metaLength = magic.readUInt32LE(0);
    const meta = await fetch(url, { headers: { Range: `bytes=${size - 8 - metaLength}-${size - 9}` } });
    expect(meta.status).toBe(206);
    expect(meta.headers.get('content-range')).toBe(`bytes ${size - 8 - metaLength}-${size - 9}/${size}`);
    expect(Number(meta.headers.get('content-length'))).toBe(metaLength);
    expect((await meta.arrayBuffer()).byteLength).toBe(metaLength);
    const start = await fetch(url, { headers: { Range: 'bytes=0-3' } });
    expect(Buffer.from(await start.arrayBuffer()).toString('latin1')).toBe('PAR1');
    for (const res of [footer, meta, start]) {
      expect(res.headers.get('etag')).toBe(etag);
      expect(res.headers.get('last-modified')).toBe(head.headers.get('last-modified'));
      expect(res.headers.get('content-encoding')).toBeNull();
    }
    const past = await fetch(url, { headers: { Range: `bytes=${size}-` } });
    expect(past.status).toBe(416);
    expect(past.headers.get('content-range')).toBe(`bytes */${size}`);
    expect(await ledgerOf(stack.ctx, accountId)).toHaveLength(1);
    await api.close();
  });

  it('20 concurrent identical uncached queries: one execution, one charge, the rest busy, limited or cached', async () => {
    const api = await stack.start();
    const { accountId, apiKey } = await api.account();
    const before = await stack.executions();
    const sql = 'SELECT title, count(*) OVER () AS n FROM gutenberg ORDER BY title LIMIT 10';
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        api.get('/api/v1/query', { method: 'POST', key: apiKey, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql }) }),
      ),
    );
    const costs: string[] = [];
    for (const res of answers) {
      const body = (await res.json()) as { code?: string };
      // The same query running (503, our lock) or the account at its tier's share of queries at once (429, its own excess).
      if (res.status === 503 || res.status === 429) {
        expect(body.code).toBe(res.status === 503 ? 'QUERY_BUSY' : 'QUERY_CONCURRENCY_LIMITED');
        expect(res.headers.get('retry-after')).toBeTruthy();
      } else {
        expect(res.status).toBe(200);
        costs.push(res.headers.get('x-credit-cost')!);
      }
    }
    expect(costs.filter((c) => c !== '0')).toEqual(['0.05']);
    expect(await stack.executions()).toBe(before + 1);
    expect((await ledgerOf(stack.ctx, accountId)).filter((r) => r.kind === 'charge')).toHaveLength(1);
    await api.close();
  });
});
