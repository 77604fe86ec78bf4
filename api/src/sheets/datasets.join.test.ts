/**
 * A connected sheet joined with a public table in `POST /api/v1/query`: only the public rows are
 * billed (DECISIONS §3: connected-sheet rows cost nothing), and a query of the sheet alone is free.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestApi } from '@uda/test-support/api-harness';
import { type SheetEnv, openSheetEnv } from '@uda/test-support/sheets-env';
import { ingest } from '../../test/support/sheets-client.ts';

let env: SheetEnv;
let api: TestApi;
let key: string;

beforeAll(async () => {
  env = await openSheetEnv('sheetjoin');
  api = await env.start();
  ({ apiKey: key } = await api.account({ tier: 'free' }));
  const sheet = await ingest(api, key, { content: 'text_id,note\n1,first\n2,second\n3,third\n', fileName: 'notes.csv', type: 'text/csv' }, { slug: 'notes' });
  expect(sheet.status).toBe('ready');
});

afterAll(async () => {
  await api.close();
  await env.close();
});

async function sql(body: Record<string, unknown>) {
  const res = await api.get('/api/v1/query', {
    method: 'POST',
    key,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

describe('POST /api/v1/query with a connected sheet', () => {
  it('200 for a join with a public table, billing only the public source', async () => {
    const { status, headers, body } = await sql({
      sql: 'SELECT g.text_id, n.note FROM gutenberg g JOIN notes n ON n.text_id = g.text_id ORDER BY g.text_id',
      datasetIds: ['notes'],
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: 'success', row_count: 3, rows: [{ text_id: 1, note: 'first' }, { text_id: 2, note: 'second' }, { text_id: 3, note: 'third' }] });
    expect(headers.get('x-service-rows-charged')).toBe('3');
    expect(headers.get('x-credit-cost')).toBe('0.015');
    const usage = JSON.parse(headers.get('x-service-usage')!) as { by_source: { source: string; rows: number }[] };
    expect(usage.by_source).toEqual([expect.objectContaining({ source: 'gutenberg', rows: 3 })]);
  });

  it('200 and free for a query that reads only the sheet', async () => {
    const { status, headers, body } = await sql({ sql: 'SELECT count(*) AS n FROM notes', datasetIds: ['notes'] });
    expect(status).toBe(200);
    expect(body).toMatchObject({ rows: [{ n: 3 }] });
    expect(headers.get('x-service-rows-charged')).toBe('0');
    expect(headers.get('x-credit-cost')).toBe('0');
  });
});
