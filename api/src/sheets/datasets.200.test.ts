/**
 * Connected sheets, happy paths through the real routes: every format from upload to `ready`, then
 * show, list, search and SQL; re-upload and delete. Real PostgreSQL, Redis, S3, DuckDB, a runner
 * child process and the sheets worker in-process.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { writeParquet, tempPath } from '@uda/test-support/runner-fixtures';
import { readFile } from 'node:fs/promises';
import type { TestApi } from '@uda/test-support/api-harness';
import { type SheetEnv, openSheetEnv } from '@uda/test-support/sheets-env';
import { form, ingest, json, query, search, settled, upload } from '../../test/support/sheets-client.ts';

let env: SheetEnv;
let api: TestApi;
let key: string;
beforeAll(async () => {
  env = await openSheetEnv('sheets200');
  api = await env.start();
  ({ apiKey: key } = await api.account());
});
afterAll(async () => {
  await api.close();
  await env.close();
});

const SALES_CSV = 'Order ID,Amount,Order Date,Customer Name\n1,10.50,2024-01-02,Ada Lovelace\n2,7.25,2024-02-03,"Grace, H."\n3,99.00,2023-12-31,Alan\n';
const COLUMNS = [
  { name: 'order_id', type: 'BIGINT' },
  { name: 'amount', type: 'DOUBLE' },
  { name: 'order_date', type: 'DATE' },
  { name: 'customer_name', type: 'VARCHAR' },
];

async function parquetBytes(): Promise<Uint8Array> {
  const path = await writeParquet(
    tempPath('sales.parquet'),
    `SELECT * FROM (VALUES (1, 10.5, DATE '2024-01-02', 'Ada Lovelace'), (2, 7.25, DATE '2024-02-03', 'Grace, H.'), (3, 99.0, DATE '2023-12-31', 'Alan'))
      t("Order ID", "Amount", "Order Date", "Customer Name")`,
  );
  return readFile(path);
}

const rows = [
  { order_id: 1, amount: 10.5, order_date: '2024-01-02', customer_name: 'Ada Lovelace' },
  { order_id: 2, amount: 7.25, order_date: '2024-02-03', customer_name: 'Grace, H.' },
  { order_id: 3, amount: 99, order_date: '2023-12-31', customer_name: 'Alan' },
];
const asJson = JSON.stringify(rows.map((r) => ({ 'Order ID': r.order_id, Amount: r.amount, 'Order Date': r.order_date, 'Customer Name': r.customer_name })));

describe('connected sheets: every format', () => {
  const cases: [string, () => Promise<{ content: string | Uint8Array; fileName: string; type?: string }>][] = [
    ['csv', async () => ({ content: SALES_CSV, fileName: 'sales.csv' })],
    ['tsv', async () => ({ content: SALES_CSV.replace(/,(?=(?:[^"]*"[^"]*")*[^"]*$)/g, '\t').replaceAll('"', ''), fileName: 'sales.tsv' })],
    ['json', async () => ({ content: asJson, fileName: 'sales.json' })],
    ['ndjson', async () => ({ content: (JSON.parse(asJson) as unknown[]).map((r) => JSON.stringify(r)).join('\n'), fileName: 'sales.ndjson' })],
    ['parquet (by content type)', async () => ({ content: await parquetBytes(), fileName: 'upload', type: 'application/vnd.apache.parquet' })],
  ];

  it.each(cases)('%s: 202 processing, then ready with typed columns, searchable and queryable', async (_label, file) => {
    const created = await json(await upload(api, key, await file()));
    expect(created.status).toBe(202);
    expect(created.body).toEqual({ id: expect.any(String), slug: expect.any(String), status: 'processing' });
    const id = String(created.body.id);
    const record = await settled(api, key, id);
    expect(record).toMatchObject({ id, status: 'ready', row_count: 3 });
    expect((record.columns as { name: string }[]).map((c) => c.name)).toEqual(COLUMNS.map((c) => c.name));
    expect(record.error).toBeUndefined();
    const found = await search(api, key, id, 'grace');
    expect(found).toEqual({ status: 200, body: { status: 'success', row_count: 1, rows: [expect.objectContaining({ order_id: 2, customer_name: 'Grace, H.' })] } });
    const sql = await query(api, key, id, 'SELECT order_id, customer_name FROM sheet ORDER BY order_id');
    expect(sql.status).toBe(200);
    expect(sql.body).toMatchObject({ status: 'success', row_count: 3, rows: rows.map(({ order_id, customer_name }) => ({ order_id, customer_name })) });
    expect(sql.body.sql_executed).toEqual(expect.stringContaining('FROM sheet'));
  });
});

describe('connected sheets: records, search and SQL', () => {
  it('shows by UUID and by slug, lists only the caller’s sheets, with the record fields', async () => {
    const record = await ingest(api, key, { content: SALES_CSV, fileName: 'x.csv' }, { name: 'Q1 Sales', slug: 'q1-sales' });
    expect(record).toEqual({
      id: expect.any(String), slug: 'q1-sales', name: 'Q1 Sales', status: 'ready', row_count: 3, columns: COLUMNS,
      created_at: expect.any(String), updated_at: expect.any(String),
    });
    expect((await json(await api.get('/api/v1/datasets/q1-sales', { key }))).body).toEqual(record);
    const other = await api.account();
    await ingest(api, other.apiKey, { content: SALES_CSV, fileName: 'theirs.csv' });
    const mine = await json(await api.get(`/api/v1/datasets?token=${key}`));
    expect(mine.status).toBe(200);
    const slugs = (mine.body.datasets as { slug: string }[]).map((d) => d.slug);
    expect(slugs).toContain('q1-sales');
    expect(slugs).not.toContain('theirs');
  });

  it('searches numeric, date and text columns, case-insensitively, with LIKE characters as text', async () => {
    const { id } = await ingest(api, key, { content: SALES_CSV, fileName: 'search.csv' });
    const ids = async (q: string) => ((await search(api, key, String(id), q)).body.rows as { order_id: number }[]).map((r) => r.order_id);
    expect(await ids('99')).toEqual([3]);
    expect(await ids('2024-02')).toEqual([2]);
    expect(await ids('LOVELACE')).toEqual([1]);
    expect(await ids('%')).toEqual([]);
    expect(await ids('zzz')).toEqual([]);
  });

  it('exposes the sheet as `sheet` and under its slug with hyphens as underscores; not charged', async () => {
    const { id } = await ingest(api, key, { content: SALES_CSV, fileName: 's.csv' }, { slug: 'team-sales' });
    const res = await api.get(`/api/v1/datasets/${id}/query`, {
      method: 'POST', key, headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sql: 'SELECT count(*) AS n FROM team_sales JOIN sheet USING (order_id)' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-credit-cost')).toBeNull();
    expect(await res.json()).toMatchObject({ status: 'success', row_count: 1, rows: [{ n: 3 }] });
  });

  it('a re-upload goes back to processing, then serves the new data, never the cached old result', async () => {
    const { id } = await ingest(api, key, { content: SALES_CSV, fileName: 'v1.csv' });
    const sql = 'SELECT count(*) AS n FROM sheet';
    expect((await query(api, key, String(id), sql)).body.rows).toEqual([{ n: 3 }]);
    const replaced = await json(await api.get(`/api/v1/datasets/${id}/file`, {
      method: 'PUT', key, body: form({ content: 'Order ID\n1\n2\n3\n4\n5\n', fileName: 'v2.csv' }),
    }));
    expect(replaced).toEqual({ status: 202, body: { id, slug: expect.any(String), status: 'processing' } });
    const record = await settled(api, key, String(id));
    expect(record).toMatchObject({ status: 'ready', row_count: 5, columns: [{ name: 'order_id', type: 'BIGINT' }] });
    expect((await query(api, key, String(id), sql)).body.rows).toEqual([{ n: 5 }]);
  });

  it('DELETE removes the record and its objects', async () => {
    const { id } = await ingest(api, key, { content: SALES_CSV, fileName: 'gone.csv' });
    const before = await env.bucket.store.list('');
    expect(before.some((o) => o.key.includes(String(id)))).toBe(true);
    expect((await api.get(`/api/v1/datasets/${id}`, { method: 'DELETE', key })).status).toBe(204);
    expect((await json(await api.get(`/api/v1/datasets/${id}`, { key }))).status).toBe(404);
    const after = await env.bucket.store.list('');
    expect(after.some((o) => o.key.includes(String(id)))).toBe(false);
  });
});
