/**
 * The lookup metrics move with the traffic they describe: `uda_lookups_total{source,outcome}` by one
 * per lookup (hit, miss, stale, error code), `uda_upstream_request_duration_seconds{source}` by one
 * observation per call to a live upstream (the recorded-upstream fakes), `uda_upstream_circuit_open`
 * when a breaker opens, `uda_query_backend_unavailable_total` when no runner answers a stored lookup
 * or a SQL query, `uda_http_request_duration_seconds` by route template and status class, and
 * `uda_rate_limit_rejections_total{kind}` by one per 429.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type TestContext, openTestContext } from '@uda/test-support/api-harness';
import { type LiveFakes, startLiveFakes } from '../../test/support/live-fakes.ts';
import { freePort } from '../../test/support/spawn.ts';
import { type StoredRunner, startStoredRunner } from '../../test/support/stored-runner.ts';
import { reader, settledValue } from '@uda/test-support/metrics';

let ctx: TestContext;
let fakes: LiveFakes;
let runner: StoredRunner;
beforeAll(async () => {
  ctx = await openTestContext();
  fakes = await startLiveFakes();
  runner = await startStoredRunner();
}, 120_000);
afterAll(async () => {
  await ctx.close();
  await fakes.close();
  await runner.close();
});

const start = (runnerUrl = runner.url) => ctx.start({ config: { ...fakes.config, QUERY_RUNNER_URLS: runnerUrl, DATA_DIR: runner.dataDir } });
const deadRunner = async () => `http://127.0.0.1:${await freePort()}`;

describe('uda_lookups_total', () => {
  it('counts a stored hit and a stored miss by canonical source, whatever alias was asked', async () => {
    const api = await start();
    const value = reader(api.services.metrics.registry);
    expect((await api.get('/books/the%20art%20of%20war')).status).toBe(200);
    expect(await value('uda_lookups_total', { source: 'gutenberg', outcome: 'hit' })).toBe(1);
    expect((await api.get('/books/zqxj%20nowhere')).status).toBe(404);
    expect(await value('uda_lookups_total', { source: 'gutenberg', outcome: 'miss' })).toBe(1);
    expect(await value('uda_lookups_total')).toBe(2);
    await api.close();
  });

  it('counts a live answer from a stored copy as stale, and an upstream failure by its code', async () => {
    const api = await start();
    const value = reader(api.services.metrics.registry);
    expect((await api.get('/wiki/stale%20metric?limit=2')).status).toBe(200);
    fakes.wiki.mode = 'unavailable';
    const stale = await api.get('/wiki/stale%20metric?limit=2');
    const failed = await api.get('/wiki/never%20seen%20metric');
    fakes.wiki.mode = 'ok';
    expect([stale.status, failed.status]).toEqual([200, 503]);
    expect(await value('uda_lookups_total', { source: 'wiki', outcome: 'hit' })).toBe(1);
    expect(await value('uda_lookups_total', { source: 'wiki', outcome: 'stale' })).toBe(1);
    expect(await value('uda_lookups_total', { source: 'wiki', outcome: 'UPSTREAM_UNAVAILABLE' })).toBe(1);
    await api.close();
  });

  it('counts unsupported source names nowhere (a label never carries caller input)', async () => {
    const api = await start();
    expect((await api.get('/nosuchsource/anything')).status).toBe(400);
    expect(await reader(api.services.metrics.registry)('uda_lookups_total')).toBe(0);
    await api.close();
  });
});

describe('uda_upstream_request_duration_seconds', () => {
  it('observes every call a live lookup makes to the upstream, by source', async () => {
    const api = await start();
    const value = reader(api.services.metrics.registry);
    const calls = fakes.pypi.requests.length;
    expect((await api.get('/pypi/requests')).status).toBe(200);
    const made = fakes.pypi.requests.length - calls;
    expect(made).toBeGreaterThan(0);
    expect(await value('uda_upstream_request_duration_seconds_count', { source: 'pypi' })).toBe(made);
    expect(await value('uda_upstream_request_duration_seconds_bucket', { source: 'pypi', le: '+Inf' })).toBe(made);
    expect(await value('uda_upstream_request_duration_seconds_sum', { source: 'pypi' })).toBeGreaterThan(0);
    expect(await value('uda_upstream_request_duration_seconds_count', { source: 'wiki' })).toBe(0);
    await api.close();
  });

  it('observes a failed call too', async () => {
    const api = await start();
    fakes.arxiv.mode = 'server-error';
    expect((await api.get('/arxiv/failing%20metric')).status).toBe(503);
    fakes.arxiv.mode = 'ok';
    expect(await reader(api.services.metrics.registry)('uda_upstream_request_duration_seconds_count', { source: 'arxiv' })).toBeGreaterThanOrEqual(1);
    await api.close();
  });
});

describe('uda_upstream_circuit_open', () => {
  it('is 1 for the source whose breaker opened after consecutive outages, 0 for the others', async () => {
    const api = await start();
    const value = reader(api.services.metrics.registry);
    expect(await value('uda_upstream_circuit_open', { source: 'openalex' })).toBe(0);
    fakes.openalex.mode = 'unavailable';
    // The default threshold is 5 consecutive UPSTREAM_UNAVAILABLE failures; new keywords each time so no copy answers.
    for (let i = 0; i < 5; i++) expect((await api.get(`/openalex/outage%20${i}`)).status).toBe(503);
    fakes.openalex.mode = 'ok';
    expect(await value('uda_upstream_circuit_open', { source: 'openalex' })).toBe(1);
    expect(await value('uda_upstream_circuit_open', { source: 'pypi' })).toBe(0);
    await api.close();
  });
});

describe('uda_query_backend_unavailable_total', () => {
  it('counts a stored lookup answered SOURCE_UNAVAILABLE because no runner can be reached', async () => {
    const api = await start(await deadRunner());
    const value = reader(api.services.metrics.registry);
    const res = await api.get('/books/war');
    expect(res.status).toBe(503);
    expect(((await res.json()) as { data: { code: string } }).data.code).toBe('SOURCE_UNAVAILABLE');
    expect(await value('uda_query_backend_unavailable_total')).toBe(1);
    expect(await value('uda_lookups_total', { source: 'gutenberg', outcome: 'SOURCE_UNAVAILABLE' })).toBe(1);
    await api.close();
  });

  it('counts a SQL query answered QUERY_BACKEND_UNAVAILABLE because no runner can be reached', async () => {
    const api = await start(await deadRunner());
    const { apiKey } = await api.account();
    const res = await api.get('/api/v1/query', {
      key: apiKey,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sql: 'SELECT title FROM gutenberg LIMIT 1' }),
    });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { code: string }).code).toBe('QUERY_BACKEND_UNAVAILABLE');
    expect(await reader(api.services.metrics.registry)('uda_query_backend_unavailable_total')).toBe(1);
    await api.close();
  });

  it('stays at 0 while the runner answers', async () => {
    const api = await start();
    expect((await api.get('/books/war')).status).toBe(200);
    expect(await reader(api.services.metrics.registry)('uda_query_backend_unavailable_total')).toBe(0);
    await api.close();
  });
});

describe('uda_http_request_duration_seconds', () => {
  it('observes each request once under its route template, method and status class', async () => {
    const api = await start();
    const value = reader(api.services.metrics.registry);
    expect((await api.get('/books/the%20art%20of%20war')).status).toBe(200);
    expect((await api.get('/books/zqxj%20nowhere')).status).toBe(404);
    const labels = (status_class: string) => ({ method: 'GET', route: '/{source}/{keywords}', status_class });
    // Observed when the response finishes, which the client may see a moment before.
    expect(await settledValue(() => value('uda_http_request_duration_seconds_count', labels('2xx')), 1)).toBe(1);
    expect(await settledValue(() => value('uda_http_request_duration_seconds_count', labels('4xx')), 1)).toBe(1);
    expect(await value('uda_http_request_duration_seconds_bucket', { ...labels('2xx'), le: '+Inf' })).toBe(1);
    await api.close();
  });
});

describe('uda_rate_limit_rejections_total', () => {
  it('counts each 429 by the limit that refused it', async () => {
    const api = await ctx.start({ config: { ...fakes.config, QUERY_RUNNER_URLS: runner.url, DATA_DIR: runner.dataDir }, limits: { anonymous: { points: 1, windowS: 3600 } } });
    const value = reader(api.services.metrics.registry);
    expect((await api.get('/books/war')).status).toBe(200);
    expect((await api.get('/books/war')).status).toBe(429);
    expect((await api.get('/books/peace')).status).toBe(429);
    expect(await value('uda_rate_limit_rejections_total', { kind: 'anonymous' })).toBe(2);
    expect(await value('uda_rate_limit_rejections_total', { kind: 'burst' })).toBe(0);
    await api.close();
  });
});
