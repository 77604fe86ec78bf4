/**
 * Every limit answers its own 429 on every route (DECISIONS §4 "Every call counts"),
 * driven by the route table: each route in `API_ROUTES` meets the burst limit, and each route whose
 * declared errors name a limit (anonymous allowance, export/SQL cap, sheet cap) meets that limit. A
 * new route is covered as soon as it is declared; one whose parameters have no sample value here
 * fails until it gets one. A refused request with a body sends a body larger than the JSON limit
 * that never finishes: the 429 still comes, and nothing is charged.
 */
import { request as httpRequest } from 'node:http';
import { describe, expect, it } from '@jest/globals';
import { ErrorCode } from '../errors/codes.ts';
import { utcDay } from '../quota.ts';
import type { TestApi } from '@uda/test-support/api-harness';
import { useStoredStack } from '../../test/support/stacks.ts';
import { API_ROUTES } from './table.ts';
import type { RouteDeclaration } from './declare.ts';

const stack = useStoredStack();
const LOOPBACK = '127.0.0.1';

/** A sample value for each path parameter name in the table. */
const PARAMS: Record<string, string> = {
  source: 'gutenberg',
  keywords: 'war',
  wikipediaUrl: 'en.wikipedia.org/wiki/War',
  name: 'gutenberg',
  id: 'ds_sample',
};

/** The query string or JSON body a route needs to reach its limits; by `METHOD path`. */
const QUERIES: Record<string, string> = {
  'get /api/v1/query.csv': `sql=${encodeURIComponent('SELECT text_id FROM gutenberg LIMIT 1')}`,
  'get /api/v1/query.parquet': `sql=${encodeURIComponent('SELECT text_id FROM gutenberg LIMIT 2')}`,
  'get /api/v1/export/{name}': 'format=parquet',
};
const BODIES: Record<string, unknown> = {
  'post /api/v1/query': { sql: 'SELECT text_id FROM gutenberg LIMIT 3' },
  'post /mcp': { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_service', arguments: { source: 'gutenberg', query: 'war' } } },
};

type Limit = 'anonymous' | 'export' | 'sheet';
const LIMIT_OF: Partial<Record<string, Limit>> = {
  [ErrorCode.REQUEST_LIMIT_EXCEEDED]: 'anonymous',
  [ErrorCode.EXPORT_LIMIT_EXCEEDED]: 'export',
  [ErrorCode.SHEET_LIMIT_EXCEEDED]: 'sheet',
};

interface Probe {
  readonly method: string;
  readonly template: string;
  readonly path: string;
  readonly contentType?: string;
  readonly body?: unknown;
  readonly limits: readonly Limit[];
}

function probeOf(route: RouteDeclaration): Probe {
  const template = route.doc?.path ?? String(route.path);
  const path = template.replace(/\{(\w+)\}|:(\w+)/g, (_m, a?: string, b?: string) => {
    const name = (a ?? b) as string;
    const value = PARAMS[name];
    if (value === undefined) throw new Error(`no sample value for the path parameter "${name}" of ${template}: add one to PARAMS`);
    return name === 'wikipediaUrl' ? value : encodeURIComponent(value);
  });
  const key = `${route.method} ${template}`;
  const query = QUERIES[key];
  const limits = (route.doc?.errors ?? []).flatMap((code) => LIMIT_OF[code] ?? []);
  return {
    method: route.method.toUpperCase(),
    template,
    path: query ? `${path}?${query}` : path,
    contentType: route.doc?.body?.contentType,
    body: BODIES[key],
    limits,
  };
}

// Express answers HEAD with the GET route; a route that documents HEAD is probed with both. A HEAD
// delivers no row, so only the burst limit counts it (DECISIONS §3, §4).
const PROBES = API_ROUTES.flatMap((route) => {
  const probe = probeOf(route);
  return route.doc?.head ? [probe, { ...probe, method: 'HEAD', limits: [] }] : [probe];
});
const name = (p: Probe) => `${p.method} ${p.template}`;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

/**
 * Sends `probe` over raw HTTP. A method with a body declares 4 MiB (over the 1 MiB JSON limit) and
 * sends only its first 64 KiB, never the rest, unless `body` is given: then it sends that in full.
 */
function send(api: TestApi, probe: Probe, options: { key?: string; body?: unknown } = {}): Promise<Answer> {
  const withBody = probe.method !== 'GET' && probe.method !== 'HEAD';
  const full = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  if (withBody) {
    headers['content-type'] = full ? 'application/json' : contentTypeOf(probe);
    headers['content-length'] = String(full ? full.length : 4 * 1024 * 1024);
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${api.url}${probe.path}`, { method: probe.method, headers });
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        req.destroy();
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text && res.headers['content-type']?.includes('json') ? JSON.parse(text) : text });
      });
    });
    if (!withBody) req.end();
    else if (full) req.end(full);
    // The body that never finishes: the request stays open until the answer has come.
    else req.write(Buffer.alloc(64 * 1024, 0x20));
  });
}

function contentTypeOf(probe: Probe): string {
  if (probe.contentType === 'multipart/form-data') return 'multipart/form-data; boundary=never-ending';
  return probe.contentType ?? 'application/json';
}

async function expectNothingCharged(api: TestApi, accountId: string): Promise<void> {
  expect(await stack.ctx.db('ledger').where({ account_id: accountId })).toHaveLength(0);
  expect(await api.services.billing.balance(accountId)).toBe(5_000_000);
}

function start(limits: object): Promise<TestApi> {
  return stack.ctx.start({ limits, config: { QUERY_RUNNER_URLS: stack.runner.url, DATA_DIR: stack.runner.dataDir } });
}

describe('every route in the table answers each of its limits with that limit\'s 429', () => {
  it('has a probe for every declared route', () => {
    expect(PROBES.length).toBe(API_ROUTES.length + API_ROUTES.filter((r) => r.doc?.head).length);
    expect(PROBES.filter((p) => p.limits.length > 0).map(name)).toEqual(
      expect.arrayContaining(['POST /api/v1/query', 'GET /api/v1/query.csv', 'GET /api/v1/export/{name}', 'POST /api/v1/datasets', 'GET /{source}/{keywords}']),
    );
  });

  describe.each(PROBES.map((p) => [name(p), p] as const))('%s', (_label, probe) => {
    it('burst: 429 RATE_LIMITED with RateLimit-* and Retry-After, before its body is read; nothing charged', async () => {
      const api = await start({ burst: { points: 1, windowS: 900 } });
      const { accountId, apiKey } = await api.account();
      // The one request the window allows, on a path no route has.
      expect((await api.get('/no/such/route/here')).status).toBe(404);
      const answer = await send(api, probe, { key: apiKey });
      expect(answer.status).toBe(429);
      expect(answer.headers).toMatchObject({ 'ratelimit-limit': '1', 'ratelimit-remaining': '0' });
      expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(answer.headers['ratelimit-reset'])).toBeGreaterThan(0);
      if (probe.method !== 'HEAD') expect(answer.body).toMatchObject({ error: 'Too many requests', data: { code: 'RATE_LIMITED' } });
      await expectNothingCharged(api, accountId);
      await api.close();
    });

    if (probe.limits.includes('anonymous')) {
      it('anonymous allowance: 429 REQUEST_LIMIT_EXCEEDED with X-RateLimit-*', async () => {
        const api = await start({ anonymous: { points: 1, windowS: 86_400 } });
        await api.services.counters.anonymous.consume(LOOPBACK, 1);
        const answer = await send(api, probe, { body: probe.body });
        expect(answer.status).toBe(429);
        expect(answer.body).toMatchObject({ error: 'REQUEST_LIMIT_EXCEEDED', limit: 1, remaining: 0 });
        expect(answer.headers).toMatchObject({ 'x-ratelimit-limit': '1', 'x-ratelimit-remaining': '0' });
        expect(Number(answer.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000);
        await api.close();
      });
    }

    for (const cap of ['export', 'sheet'] as const) {
      if (!probe.limits.includes(cap)) continue;
      it(`${cap} daily cap: 429 ${cap === 'export' ? 'EXPORT' : 'SHEET'}_LIMIT_EXCEEDED with RateLimit-* and Retry-After; nothing charged`, async () => {
        const api = await start(cap === 'export' ? { exportDaily: 1 } : { sheetDaily: 1 });
        const { accountId, apiKey } = await api.account();
        const counter = cap === 'export' ? api.services.counters.exportDaily : api.services.counters.sheetDaily;
        await counter.consume(`${accountId}:${utcDay(new Date())}`, 1);
        const answer = await send(api, probe, { key: apiKey, body: probe.body });
        expect(answer.status).toBe(429);
        expect(answer.body).toMatchObject({ message: expect.stringContaining('Maximum 1,000') });
        expect(answer.headers).toMatchObject({ 'ratelimit-limit': '1', 'ratelimit-remaining': '0' });
        expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
        await expectNothingCharged(api, accountId);
        await api.close();
      });
    }
  });
});
