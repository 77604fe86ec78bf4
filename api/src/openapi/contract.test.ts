/**
 * Contract test: real requests (successes and each error we can provoke) to a started API with a
 * real runner, export and live-source fakes; every answer's status, headers and body are checked
 * against the served OpenAPI document with ajv. Error shapes field by field stay in
 * errors/errors.shape.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type LiveFakes, startLiveFakes } from '../../test/support/live-fakes.ts';
import { ContractChecker } from '../../test/support/openapi-contract.ts';
import { openStack, type Stack } from '@uda/test-support/sql-stack';
import type { TestApi } from '@uda/test-support/api-harness';

let stack: Stack;
let fakes: LiveFakes;
let checker: ContractChecker;
let served: { paths: Record<string, Record<string, unknown>> };
beforeAll(async () => {
  stack = await openStack('contract');
  fakes = await startLiveFakes();
}, 120_000);
afterAll(async () => {
  await stack.close();
  await fakes.close();
});

const start = (options: Parameters<Stack['start']>[0] = {}) => stack.start({ ...options, config: { ...fakes.config, ...options.config } });

/** Sends the request and expects the answer to match the document at `status`. */
async function expectContract(api: TestApi, method: string, template: string, url: string, status: number, init: RequestInit & { key?: string } = {}): Promise<Response> {
  const res = await api.get(url, { ...init, method });
  const copy = res.clone();
  const result = await checker.check(method, template, res);
  expect(result).toEqual({ operation: `${method} ${template}`, status, problems: [] });
  return copy;
}

const json = (body: unknown) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('responses match the OpenAPI document', () => {
  it('serves the document the checks use', async () => {
    const api = await start();
    const res = await api.get('/api/v1/openapi.json');
    served = (await res.json()) as typeof served;
    checker = new ContractChecker(served);
    await expectContract(api, 'GET', '/api/v1/openapi.json', '/api/v1/openapi.json', 200);
    await api.close();
  });

  it('lookups: stored and live successes, anonymous and keyed; 400, 402, 404, 429 and upstream failures', async () => {
    const api = await start({ limits: { anonymous: { points: 3, windowS: 86_400 } } });
    const { apiKey } = await api.account();
    const { apiKey: broke } = await api.account({ usd: '0' });
    await expectContract(api, 'GET', '/{source}/{keywords}', '/gutenberg/war', 200);
    await expectContract(api, 'GET', '/{source}/{keywords}', '/books/war?limit=2', 200, { key: apiKey });
    await expectContract(api, 'HEAD', '/{source}/{keywords}', '/gutenberg/war', 200, { key: apiKey });
    await expectContract(api, 'GET', '/{source}/{keywords}', '/pypi/requests', 200, { key: apiKey });
    await expectContract(api, 'GET', '/https:/{wikipediaUrl}', '/https:/en.wikipedia.org/wiki/Ayrton_Senna', 200, { key: apiKey });
    await expectContract(api, 'HEAD', '/https:/{wikipediaUrl}', '/https:/en.wikipedia.org/wiki/Ayrton_Senna', 200, { key: apiKey });
    await expectContract(api, 'GET', '/https:/{wikipediaUrl}', '/https:/example.com/wiki/x', 400, { key: apiKey });
    await expectContract(api, 'GET', '/{source}/{keywords}', '/nope/war', 400, { key: apiKey });
    await expectContract(api, 'GET', '/{source}/{keywords}', '/gutenberg/war?limit=0', 400, { key: apiKey });
    await expectContract(api, 'GET', '/{source}/{keywords}', '/gutenberg/zzqqxxnothing', 404, { key: apiKey });
    await expectContract(api, 'GET', '/{source}/{keywords}', '/gutenberg/war', 402, { key: broke });
    // Each on its own source, so no source's circuit breaker opens on the way.
    const upstream: ['wiki' | 'arxiv' | 'stackexchange' | 'openalex', string, number][] = [
      ['wiki', 'forbidden', 502],
      ['openalex', 'html', 502],
      ['arxiv', 'unavailable', 503],
      ['stackexchange', 'rate-limited-retry-after', 503],
    ];
    for (const [source, mode, status] of upstream) {
      fakes[source].mode = mode as (typeof fakes)[typeof source]['mode'];
      await expectContract(api, 'GET', '/{source}/{keywords}', `/${source}/contract%20${mode}`, status, { key: apiKey });
      fakes[source].mode = 'ok';
    }
    // The anonymous allowance (3 here) is spent by the first anonymous success and two more.
    await expectContract(api, 'GET', '/{source}/{keywords}', '/census/texas', 200);
    await expectContract(api, 'GET', '/{source}/{keywords}', '/food/cheese', 200);
    await expectContract(api, 'GET', '/{source}/{keywords}', '/gutenberg/war', 429);
    await api.close();
  });

  it('SQL: JSON, CSV, Parquet, HEAD and ranges; 400, 401, 402, 403 and the daily cap', async () => {
    const api = await start({ limits: { exportDaily: 4 } });
    const { apiKey } = await api.account();
    const { apiKey: broke } = await api.account({ usd: '0' });
    const sql = 'SELECT title FROM gutenberg ORDER BY text_id LIMIT 3';
    const q = `sql=${encodeURIComponent(sql)}`;
    await expectContract(api, 'POST', '/api/v1/query', '/api/v1/query', 200, { key: apiKey, ...json({ sql }) });
    await expectContract(api, 'GET', '/api/v1/query.csv', `/api/v1/query.csv?${q}`, 200, { key: apiKey });
    await expectContract(api, 'HEAD', '/api/v1/query.parquet', `/api/v1/query.parquet?${q}&token=${apiKey}`, 200);
    await expectContract(api, 'HEAD', '/api/v1/query.csv', `/api/v1/query.csv?${q}`, 200, { key: apiKey });
    const full = await expectContract(api, 'GET', '/api/v1/query.parquet', `/api/v1/query.parquet?${q}`, 200, { key: apiKey });
    await expectContract(api, 'GET', '/api/v1/query.parquet', `/api/v1/query.parquet?${q}`, 206, { key: apiKey, headers: { range: 'bytes=0-3' } });
    await expectContract(api, 'GET', '/api/v1/query.parquet', `/api/v1/query.parquet?${q}`, 304, { key: apiKey, headers: { 'if-none-match': full.headers.get('etag')! } });
    await expectContract(api, 'GET', '/api/v1/query.csv', `/api/v1/query.csv?${q}`, 416, { key: apiKey, headers: { range: 'bytes=99999999-' } });
    await expectContract(api, 'POST', '/api/v1/query', '/api/v1/query', 400, { key: apiKey, ...json({ sql: 'DROP TABLE gutenberg' }) });
    await expectContract(api, 'POST', '/api/v1/query', '/api/v1/query', 401, json({ sql }));
    await expectContract(api, 'POST', '/api/v1/query', '/api/v1/query', 402, { key: broke, ...json({ sql }) });
    await expectContract(api, 'POST', '/api/v1/query', '/api/v1/query', 403, { key: apiKey, ...json({ sql: 'SELECT 1', datasetIds: ['not-mine'] }) });
    // One query ran (the re-reads are free and uncounted; refused ones never run); three more reach the cap of 4.
    for (const n of [1, 2, 3]) await expectContract(api, 'POST', '/api/v1/query', '/api/v1/query', 200, { key: apiKey, ...json({ sql: `SELECT ${n} AS n` }) });
    await expectContract(api, 'POST', '/api/v1/query', '/api/v1/query', 429, { key: apiKey, ...json({ sql: 'SELECT 4 AS n' }) });
    await api.close();
  });

  it('exports: a source and a bulk file, ranges, 304, 416; 400, 401, 402, 404', async () => {
    const api = await start();
    const { apiKey } = await api.account({ tier: 'pro' });
    const { apiKey: broke } = await api.account({ usd: '0' });
    const path = '/api/v1/export/{name}';
    const first = await expectContract(api, 'GET', path, '/api/v1/export/gutenberg?format=parquet', 200, { key: apiKey });
    await expectContract(api, 'HEAD', path, `/api/v1/export/service.parquet.zip?token=${apiKey}`, 200);
    await expectContract(api, 'GET', path, '/api/v1/export/gutenberg?format=parquet', 206, { key: apiKey, headers: { range: 'bytes=0-99' } });
    await expectContract(api, 'GET', path, '/api/v1/export/gutenberg?format=parquet', 304, { key: apiKey, headers: { 'if-none-match': first.headers.get('etag')! } });
    await expectContract(api, 'GET', path, '/api/v1/export/gutenberg?format=parquet', 416, { key: apiKey, headers: { range: 'bytes=999999999-' } });
    await expectContract(api, 'GET', path, '/api/v1/export/gutenberg?format=xml', 400, { key: apiKey });
    await expectContract(api, 'GET', path, '/api/v1/export/gutenberg', 401);
    await expectContract(api, 'GET', path, '/api/v1/export/service.db', 402, { key: broke });
    await expectContract(api, 'GET', path, '/api/v1/export/gutenberg?version=20000101T000000000Z-abcdef', 404, { key: apiKey });
    await api.close();
  });

  it('usage, connected sheets and MCP', async () => {
    const api = await start();
    const { apiKey } = await api.account();
    await expectContract(api, 'GET', '/api/v1/auth/usage', '/api/v1/auth/usage', 200);
    await expectContract(api, 'GET', '/api/v1/auth/usage', '/api/v1/auth/usage', 200, { key: apiKey });
    await expectContract(api, 'GET', '/api/v1/datasets', '/api/v1/datasets', 200, { key: apiKey });
    await expectContract(api, 'GET', '/api/v1/datasets', '/api/v1/datasets', 401);
    await expectContract(api, 'GET', '/api/v1/datasets/{id}', '/api/v1/datasets/nope', 404, { key: apiKey });
    await expectContract(api, 'GET', '/api/v1/datasets/{id}/search', '/api/v1/datasets/nope/search', 400, { key: apiKey });
    await expectContract(api, 'POST', '/api/v1/datasets/{id}/query', '/api/v1/datasets/nope/query', 404, { key: apiKey, ...json({ sql: 'SELECT 1' }) });
    await expectContract(api, 'DELETE', '/api/v1/datasets/{id}', '/api/v1/datasets/nope', 404, { key: apiKey });
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'contract', version: '1' } },
    };
    await expectContract(api, 'POST', '/mcp', '/mcp', 200, { headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(initialize) });
    await expectContract(api, 'GET', '/mcp', '/mcp', 405);
    await expectContract(api, 'DELETE', '/mcp', '/mcp', 405);
    await api.close();
  });

  it('the burst limit answers every route with the documented 429', async () => {
    const api = await start({ limits: { burst: { points: 1, windowS: 900 } } });
    await expectContract(api, 'GET', '/api/v1/auth/usage', '/api/v1/auth/usage', 200);
    await expectContract(api, 'GET', '/api/v1/auth/usage', '/api/v1/auth/usage', 429);
    await expectContract(api, 'GET', '/{source}/{keywords}', '/gutenberg/war', 429);
    await api.close();
  });

  it('covered every documented operation but the multipart uploads', () => {
    const covered = new Set([...checker.covered].map((c) => c.split(' ').slice(0, 2).join(' ')));
    // The uploads are multipart and need the sheets worker; datasets.*.test.ts covers them.
    const uploads = ['POST /api/v1/datasets', 'PUT /api/v1/datasets/{id}/file'];
    const documented = Object.entries(served.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`));
    expect(documented.filter((op) => !covered.has(op) && !uploads.includes(op))).toEqual([]);
  });
});
