/**
 * A real DuckDB client end to end: DuckDB-Wasm in Chromium, on a page of another origin, reads the
 * started service over HTTP with range requests, through a transparent proxy that records every
 * request it makes. Billing is read from the answers' X-Credit-Cost and X-Credits-Remaining.
 *
 * The README section "Reading results and exports from DuckDB" quotes the statements in SNIPPETS;
 * the last test fails when the two drift apart.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  type DuckDbWasmPage,
  type DuckDbWasmPages,
  type RecordedRequest,
  type RecordingProxy,
  startDuckDbWasmPages,
  startRecordingProxy,
} from '@uda/test-support/duckdb-wasm';
import { MAX_HEADER_BYTES } from '../../src/server.ts';
import type { TestApi } from '@uda/test-support/api-harness';
import { netCharged, openStack, type Stack } from '@uda/test-support/sql-stack';

/** What the README shows; `{base}`, `{key}` and `{sql}` (URL-encoded) are filled in per test. */
export const SNIPPETS = {
  queryParquet: "SELECT * FROM read_parquet('{base}/api/v1/query.parquet?sql={sql}&token={key}')",
  exportFilter: "SELECT title FROM read_parquet('{base}/api/v1/export/gutenberg?format=parquet&token={key}') WHERE text_id = 132",
  attach: "ATTACH '{base}/api/v1/export/service.db?token={key}' AS svc (READ_ONLY)",
  throughAttach: 'SELECT title FROM svc.gutenberg WHERE text_id = 132',
  queryCsv: "SELECT * FROM read_csv('{base}/api/v1/query.csv?sql={sql}&token={key}')",
  exportCsv: "SELECT count(*) AS n FROM read_csv('{base}/api/v1/export/census?format=csv&token={key}')",
  curlRange: 'curl -sS -r 0-99 -H "Authorization: Bearer {key}" "{base}/api/v1/export/gutenberg?format=parquet"',
} as const;

const run = promisify(execFile);

let stack: Stack;
let api: TestApi;
let proxy: RecordingProxy;
let pages: DuckDbWasmPages;
let duck128: DuckDbWasmPage;
let duck132: DuckDbWasmPage;
beforeAll(async () => {
  stack = await openStack('duckdbwasm');
  api = await stack.start();
  // The proxy passes longer URLs than the service accepts, so the service's own 431 reaches the page.
  proxy = await startRecordingProxy(api.url, { maxHeaderSize: 2 * MAX_HEADER_BYTES });
  pages = await startDuckDbWasmPages();
  duck128 = await pages.open('1.28');
  duck132 = await pages.open('1.32');
}, 120_000);
afterAll(async () => {
  await pages?.close();
  await proxy?.close();
  await api?.close();
  await stack?.close();
});

function fill(snippet: string, values: { key?: string; sql?: string; base?: string }): string {
  return snippet
    .replaceAll('{base}', values.base ?? proxy.url)
    .replaceAll('{key}', encodeURIComponent(values.key ?? ''))
    // encodeURIComponent leaves ' alone, and a quote would end DuckDB's string literal.
    .replaceAll('{sql}', encodeURIComponent(values.sql ?? '').replaceAll("'", '%27'));
}

/** The requests made while `work` ran. */
async function recorded<T>(work: () => Promise<T>): Promise<{ result: T; requests: RecordedRequest[] }> {
  const from = proxy.requests.length;
  const result = await work();
  return { result, requests: proxy.requests.slice(from) };
}

async function rows(page: DuckDbWasmPage, sql: string): Promise<Record<string, unknown>[]> {
  const answer = await page.sql(sql);
  if (answer.error !== undefined) throw new Error(`DuckDB-Wasm: ${answer.error}`);
  return answer.rows ?? [];
}

async function postQuery(key: string, sql: string): Promise<{ res: Response; rows: Record<string, unknown>[] }> {
  const res = await api.get('/api/v1/query', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql }) });
  return { res, rows: ((await res.json()) as { rows: Record<string, unknown>[] }).rows };
}

const charged = (requests: RecordedRequest[]) => requests.filter((r) => r.creditCost !== undefined && r.creditCost !== '0');

describe('DuckDB-Wasm in Chromium against the service, cross-origin', () => {
  it('read_parquet of query.parquet: the same rows as POST /api/v1/query, charged once, re-reads free', async () => {
    const { accountId, apiKey } = await api.account();
    const sql = 'SELECT text_id, title FROM gutenberg ORDER BY text_id LIMIT 20';
    const { result, requests } = await recorded(() => rows(duck128, fill(SNIPPETS.queryParquet, { key: apiKey, sql })));
    expect(result).toHaveLength(20);
    // HEAD first (it runs and charges the query), then range reads of the stored file.
    expect(requests[0]).toMatchObject({ method: 'HEAD', status: 200, creditCost: '0.1', creditsRemaining: '4.9' });
    expect(requests.slice(1).every((r) => r.creditCost === '0' && r.creditsRemaining === '4.9')).toBe(true);
    expect(requests.some((r) => r.method === 'GET' && r.status === 206)).toBe(true);

    const again = await recorded(() => rows(duck128, fill(SNIPPETS.queryParquet, { key: apiKey, sql })));
    expect(again.result).toEqual(result);
    expect(charged(again.requests)).toEqual([]);
    const json = await postQuery(apiKey, sql);
    expect(json.res.headers.get('x-service-cached')).toBe('true');
    expect(json.res.headers.get('x-credits-remaining')).toBe('4.9');
    expect(json.rows).toEqual(result);
    expect(await netCharged(stack.ctx, accountId)).toBe(100_000);
  });

  it('a selective filter on an export Parquet file reads a fraction of the file with ranges, charged once', async () => {
    const { apiKey } = await api.account();
    const size = Number((await api.get('/api/v1/export/gutenberg?format=parquet', { method: 'HEAD', key: apiKey })).headers.get('content-length'));
    const { result, requests } = await recorded(() => rows(duck128, fill(SNIPPETS.exportFilter, { key: apiKey })));
    expect(result).toEqual((await postQuery(apiKey, 'SELECT title FROM gutenberg WHERE text_id = 132')).rows);
    const fetched = requests.reduce((sum, r) => sum + r.bodyBytes, 0);
    expect(requests.every((r) => r.method === 'HEAD' || r.status === 206)).toBe(true);
    // Only the footer and the pages of the columns and row groups the query needs.
    expect(fetched).toBeLessThan(size);
    console.log(`DuckDB-Wasm 1.28 fetched ${fetched} of ${size} bytes (${Math.round((100 * fetched) / size)}%) for: ${SNIPPETS.exportFilter}`);
    expect(charged(requests).map((r) => r.creditCost)).toEqual(['0.1']);
  });

  it('ATTACH of service.db over HTTP, read-only: queries through it, its WAL probe is a 404, charged once', async () => {
    const { apiKey } = await api.account({ tier: 'developer' });
    const { requests } = await recorded(async () => {
      await rows(duck132, fill(SNIPPETS.attach, { key: apiKey }));
      return rows(duck132, SNIPPETS.throughAttach);
    });
    const through = await rows(duck132, SNIPPETS.throughAttach);
    expect(through).toEqual((await postQuery(apiKey, 'SELECT title FROM gutenberg WHERE text_id = 132')).rows);
    expect(requests.find((r) => r.url.includes('/service.db.wal'))?.status).toBe(404);
    expect(charged(requests).map((r) => r.creditCost)).toEqual(['1']);
    await rows(duck132, 'DETACH svc');
  });

  it('read_csv of a CSV result and of a CSV export', async () => {
    const { apiKey } = await api.account();
    const sql = 'SELECT text_id, title FROM gutenberg ORDER BY text_id LIMIT 5';
    const { result, requests } = await recorded(() => rows(duck132, fill(SNIPPETS.queryCsv, { key: apiKey, sql })));
    expect(result).toEqual((await postQuery(apiKey, sql)).rows);
    expect(charged(requests).map((r) => r.creditCost)).toEqual(['0.025']);
    const census = await recorded(() => rows(duck132, fill(SNIPPETS.exportCsv, { key: apiKey })));
    const [{ n }] = (await postQuery(apiKey, 'SELECT count(*) AS n FROM census_states')).rows as [{ n: number }];
    expect(census.result).toEqual([{ n }]);
    expect(charged(census.requests).map((r) => r.creditCost)).toEqual(['0.1']);
  });

  it('a SQL text of nearly 10,000 characters through the GET route', async () => {
    const { apiKey } = await api.account();
    const head = 'SELECT text_id, title FROM gutenberg WHERE title <> \'';
    const tail = "' ORDER BY text_id LIMIT 3";
    // Two-byte characters: the URL is about 60,000 bytes, past Node's default header limit.
    const sql = `${head}${'é'.repeat(9_990 - head.length - tail.length)}${tail}`;
    expect(sql.length).toBe(9_990);
    const { result, requests } = await recorded(() => rows(duck132, fill(SNIPPETS.queryCsv, { key: apiKey, sql })));
    expect(result.map((r) => r.text_id)).toEqual([1, 2, 3]);
    expect(requests.every((r) => r.status < 400)).toBe(true);
  });

  it('a URL over the header limit: the page reads the JSON 431 cross-origin', async () => {
    const { apiKey } = await api.account();
    const sql = `SELECT '${'中'.repeat(15_000)}' AS s`;
    const answer = await duck128.fetch(fill('{base}/api/v1/query.csv?sql={sql}&token={key}', { key: apiKey, sql }));
    expect(answer.status).toBe(431);
    expect(JSON.parse(answer.body ?? '{}')).toEqual({ status: 'error', message: expect.stringContaining('POST /api/v1/query') });
  });

  it('a 401 (no valid key) and a 402 (no credit) reach DuckDB-Wasm as a file it cannot open', async () => {
    const sql = 'SELECT text_id FROM gutenberg LIMIT 1';
    const unauthorized = await recorded(() => duck132.sql(fill(SNIPPETS.queryCsv, { key: 'service_not_a_key', sql })));
    expect(unauthorized.requests.map((r) => [r.method, r.status])).toContainEqual(['HEAD', 401]);
    expect(unauthorized.result.error).toContain('No files found that match the pattern');
    const { apiKey } = await api.account({ usd: '0' });
    const broke = await recorded(() => duck132.sql(fill(SNIPPETS.queryCsv, { key: apiKey, sql })));
    expect(broke.requests.map((r) => [r.method, r.status])).toContainEqual(['HEAD', 402]);
    expect(broke.result.error).toContain('No files found that match the pattern');
  });

  it('curl reads a byte range with the key in a header', async () => {
    const { apiKey } = await api.account();
    // The README's command line as it stands, run by a shell.
    const { stdout } = await run('bash', ['-c', fill(SNIPPETS.curlRange, { key: apiKey, base: api.url })], { encoding: 'buffer' });
    expect(stdout).toHaveLength(100);
    expect(stdout.subarray(0, 4).toString('latin1')).toBe('PAR1');
  });

  it('the README shows these exact statements', () => {
    const readme = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
    for (const snippet of Object.values(SNIPPETS)) expect(readme).toContain(snippet);
  });
});
