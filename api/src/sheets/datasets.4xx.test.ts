/**
 * Connected sheets, refusals: keyless 401, bad input 400, slug clash 409, oversized upload 413,
 * the sheet cap 429, every ingestion failure visible as `failed`, and the sandbox holding inside
 * sheet SQL (attempts taken from the runner's escape corpus, sandbox.escape.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { tempPath, writeParquet } from '@uda/test-support/runner-fixtures';
import { SHEET_QUOTAS } from '../accounts/quotas.ts';
import type { TestApi } from '@uda/test-support/api-harness';
import { form, ingest, json, query, search, upload } from '../../test/support/sheets-client.ts';
import { type SheetEnv, openSheetEnv } from '@uda/test-support/sheets-env';

let env: SheetEnv;
let api: TestApi;
let key: string;
let ready: string;
beforeAll(async () => {
  env = await openSheetEnv('sheets4xx');
  api = await env.start({ config: { SHEETS_MAX_UPLOAD_MB: '1' } });
  ({ apiKey: key } = await api.account());
  ready = String((await ingest(api, key, { content: 'a,b\n1,x\n', fileName: 'ok.csv' }, { slug: 'ok' })).id);
});
afterAll(async () => {
  await api.close();
  await env.close();
});

describe('401 without a usable key', () => {
  it('answers every sheet route with {error:"Unauthorized", message:"No token provided"}', async () => {
    const calls: [string, string][] = [
      ['POST', '/api/v1/datasets'], ['GET', '/api/v1/datasets'], ['GET', `/api/v1/datasets/${ready}`],
      ['PUT', `/api/v1/datasets/${ready}/file`], ['DELETE', `/api/v1/datasets/${ready}`],
      ['GET', `/api/v1/datasets/${ready}/search?q=x`], ['POST', `/api/v1/datasets/${ready}/query`],
      ['GET', `/api/v1/datasets/${ready}/search?q=x&token=service_not_a_key`],
    ];
    for (const [method, path] of calls) {
      const res = await json(await api.get(path, { method }));
      expect([method, path, res]).toEqual([method, path, { status: 401, body: { error: 'Unauthorized', message: 'No token provided' } }]);
    }
  });
});

describe('400, 409 and 413 on upload', () => {
  it('409 on a slug the account already uses; the same slug is free for another account', async () => {
    const res = await json(await upload(api, key, { content: 'a\n1\n', fileName: 'a.csv' }, { slug: 'ok' }));
    expect(res).toEqual({ status: 409, body: { status: 'error', message: 'The slug "ok" is already used by another of your sheets.' } });
    const other = await api.account();
    expect((await upload(api, other.apiKey, { content: 'a\n1\n', fileName: 'a.csv' }, { slug: 'ok' })).status).toBe(202);
  });

  it('400 on a slug that is not URL-safe or is a UUID, a missing file and an unsupported type', async () => {
    const file = { content: 'a\n1\n', fileName: 'a.csv' };
    expect((await json(await upload(api, key, file, { slug: 'Not OK' }))).body.message).toMatch(/^The slug must be/);
    expect((await json(await upload(api, key, file, { slug: '0b6e9c1e-5f4a-4c1b-9d9e-1f2a3b4c5d6e' }))).body.message).toBe('The slug must not be a UUID.');
    expect((await json(await upload(api, key, { content: 'x', fileName: 'a.xlsx' }))).body.message).toMatch(/^Unsupported file type/);
    const noFile = new FormData();
    noFile.set('name', 'x');
    expect(await json(await api.get('/api/v1/datasets', { method: 'POST', key, body: noFile }))).toEqual({
      status: 400, body: { status: 'error', message: 'Include the file as a multipart part named "file".' },
    });
    const notMultipart = await json(await api.get('/api/v1/datasets', { method: 'POST', key, headers: { 'content-type': 'text/csv' }, body: 'a\n1\n' }));
    expect(notMultipart.status).toBe(400);
  });

  it('413 over the upload limit, with nothing stored', async () => {
    const before = (await env.bucket.store.list('uploads/')).length;
    const rows = (await json(await api.get('/api/v1/datasets', { key }))).body.datasets as unknown[];
    const big = `a\n${'1234567\n'.repeat(140_000)}`;
    const res = await json(await upload(api, key, { content: big, fileName: 'big.csv' }));
    expect(res).toEqual({ status: 413, body: { status: 'error', message: 'The file is larger than the 1 MB upload limit. Nothing was stored.' } });
    const replace = await json(await api.get(`/api/v1/datasets/${ready}/file`, { method: 'PUT', key, body: form({ content: big, fileName: 'big.csv' }) }));
    expect(replace.status).toBe(413);
    expect((await env.bucket.store.list('uploads/')).length).toBe(before);
    expect((await json(await api.get('/api/v1/datasets', { key }))).body.datasets).toHaveLength(rows.length);
  });
});

describe('403 past the sheets quota', () => {
  const tiny = { content: 'a\n1\n', fileName: 'tiny.csv' };
  const uploadsOf = async (accountId: string) => (await env.bucket.store.list(`uploads/${encodeURIComponent(accountId)}/`)).length;

  it("refuses the sheet one past the plan's count, with nothing stored; the list shows the quota", async () => {
    const { accountId, apiKey } = await api.account();
    const quota = SHEET_QUOTAS.free;
    for (let i = 0; i < quota.sheets; i++) expect((await upload(api, apiKey, tiny)).status).toBe(202);
    const before = await uploadsOf(accountId);
    const res = await json(await upload(api, apiKey, tiny));
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ status: 'error', message: expect.stringMatching(/^Your plan holds at most 10 sheets and you have 10\./) });
    expect(await uploadsOf(accountId)).toBe(before);
    const list = (await json(await api.get('/api/v1/datasets', { key: apiKey }))).body;
    expect(list.datasets).toHaveLength(quota.sheets);
    expect(list.quota).toEqual({ sheets: quota.sheets, max_sheets: quota.sheets, bytes: quota.sheets * tiny.content.length, max_bytes: quota.bytes });
  });

  it("refuses an upload past the plan's bytes; a replacement counts only the file it brings", async () => {
    const { accountId, apiKey } = await api.account();
    const id = String((await ingest(api, apiKey, tiny)).id);
    // As if the account's sheet files already filled the quota but 2 bytes.
    await env.ctx.db('datasets').where({ id }).update({ upload_bytes: SHEET_QUOTAS.free.bytes - 2 });
    const res = await json(await upload(api, apiKey, tiny));
    expect(res).toEqual({ status: 403, body: { status: 'error', message: expect.stringMatching(/^Your plan holds at most 100 MB of sheet files/) } });
    expect(await uploadsOf(accountId)).toBe(1);
    const replace = await api.get(`/api/v1/datasets/${id}/file`, { method: 'PUT', key: apiKey, body: form(tiny) });
    expect(replace.status).toBe(202);
  });
});

describe('ingestion failures are visible as `failed` with a user-safe message', () => {
  async function nestedParquet() {
    return { content: await readFile(await writeParquet(tempPath('nested.parquet'), 'SELECT 1 AS id, [1, 2] AS "Tags"')), fileName: 'nested.parquet' };
  }
  const cases: [string, () => Promise<{ content: string | Uint8Array; fileName: string }>, RegExp][] = [
    ['malformed CSV', async () => ({ content: 'a,b\n1,2\n3,"x\n4,5\n', fileName: 'q.csv' }), /^The CSV file is malformed/],
    ['unsupported encoding', async () => ({ content: Buffer.from('name\ncaf\xe9\n', 'latin1'), fileName: 'l1.csv' }), /^The file is not UTF-8 encoded/],
    ['zero columns', async () => ({ content: '', fileName: 'empty.csv' }), /^The file is empty: it has no columns\.$/],
    ['invalid JSON', async () => ({ content: '[{"a":1},', fileName: 'b.json' }), /^The file is not valid JSON/],
    ['Parquet with an unsupported type', nestedParquet, /^Column "Tags" has an unsupported type \(list\)/],
  ];
  it.each(cases)('%s', async (_label, file, message) => {
    const record = await ingest(api, key, await file());
    expect(record).toMatchObject({ status: 'failed', error: expect.stringMatching(message) });
    const refused = await search(api, key, String(record.id), 'x');
    expect(refused.status).toBe(403);
  });
});

describe('search and SQL refusals', () => {
  it('400 on a search text over 500 characters or none', async () => {
    expect(await search(api, key, ready, 'x'.repeat(500))).toMatchObject({ status: 200 });
    expect(await search(api, key, ready, 'x'.repeat(501))).toEqual({
      status: 400, body: { status: 'error', message: 'The search text is at most 500 characters.' },
    });
    expect((await json(await api.get(`/api/v1/datasets/${ready}/search`, { key }))).status).toBe(400);
  });

  it('the sandbox holds inside sheet queries: 400 QUERY_INVALID and nothing leaks', async () => {
    const attempts = [
      "SELECT * FROM read_text('/etc/passwd')",
      "FROM '/etc/passwd'",
      "SELECT * FROM read_parquet('/tmp/x.parquet')",
      "COPY sheet TO '/tmp/out.csv'",
      "ATTACH '/tmp/evil.db' AS evil",
      'SET enable_external_access = true',
      'INSERT INTO sheet VALUES (2, 2)',
      'DROP TABLE sheet',
      "SELECT * FROM query('SELECT * FROM read_text(''/etc/passwd'')')",
    ];
    for (const sql of attempts) {
      const res = await query(api, key, ready, sql);
      expect([sql, res.status, res.body.status, res.body.code]).toEqual([sql, 400, 'error', 'QUERY_INVALID']);
      expect(JSON.stringify(res.body)).not.toContain('root:');
    }
    expect((await query(api, key, ready, 'SELECT count(*) AS n FROM sheet')).body.rows).toEqual([{ n: 1 }]);
  });

  it('400 on public tables: this uncharged route reads only the sheet', async () => {
    for (const sql of ['SELECT * FROM gutenberg', 'SELECT count(*) AS n FROM sheet, service.main.gutenberg', 'WITH g AS (SELECT * FROM gutenberg) SELECT * FROM g']) {
      const res = await query(api, key, ready, sql);
      expect([sql, res.status, res.body.code, res.body.rows]).toEqual([sql, 400, 'QUERY_INVALID', undefined]);
    }
  });

  it('400 without {sql}', async () => {
    const res = await json(await api.get(`/api/v1/datasets/${ready}/query`, { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: '{}' }));
    expect(res).toEqual({ status: 400, body: { status: 'error', message: 'Give the SQL as {"sql": "..."}.' } });
  });
});

describe('429 sheet cap', () => {
  it('counts every sheet route per account per day, with the flat body', async () => {
    const capped = await env.start({ limits: { sheetDaily: 2 } });
    const { apiKey } = await capped.account();
    expect((await capped.get('/api/v1/datasets', { key: apiKey })).status).toBe(200);
    expect((await capped.get('/api/v1/datasets/nope/search?q=x', { key: apiKey })).status).toBe(404);
    const res = await json(await capped.get('/api/v1/datasets', { key: apiKey }));
    expect(res).toEqual({
      status: 429,
      body: { status: 'error', message: 'Connected sheet rate limit exceeded. Maximum 1,000 sheet requests per day per account.' },
    });
    await capped.close();
  });
});
