/**
 * A store that blinks answers 503 with Retry-After, never 500. The API is wired to a
 * PostgreSQL cluster and a Redis of this file's own (`own-servers.ts`), so they can be stopped; the
 * query-runner and the bucket are the usual test ones. Each metered route is sent twice while the
 * store is down: for an account that has not spent yet (its credit must come from PostgreSQL) and
 * for one that has (a lease in Redis). Every answer must be a success or a 503 with Retry-After
 * (MCP: a tool error that says when to retry); once the store is back, every route answers again.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestApi } from '@uda/test-support/api-harness';
import { type OwnPostgres, type OwnRedis, startPostgres, startRedis } from '@uda/test-support/own-servers';
import { openStack, type Stack } from '@uda/test-support/sql-stack';

let pg: OwnPostgres;
let redis: OwnRedis;
let stack: Stack;
let api: TestApi;
beforeAll(async () => {
  pg = await startPostgres();
  redis = await startRedis();
  stack = await openStack('storeoutage', { databaseServerUrl: pg.url });
  api = await stack.start({ config: { REDIS_URL: redis.url }, useOwnRedis: true });
}, 180_000);
afterAll(async () => {
  await stack?.close();
  await redis?.close();
  await pg?.close();
});

const SQL = 'SELECT title FROM gutenberg ORDER BY title LIMIT 3';
const mcpCall = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_service', arguments: { source: 'gutenberg', query: 'pride', limit: 3 } } });

/** One request per metered route family of the load mix; `n` makes the SQL text distinct. */
const ROUTES: Record<string, (key: string, n: number) => Promise<Response>> = {
  'paid lookup': (key) => api.get('/gutenberg/pride', { key }),
  'SQL': (key, n) => api.get('/api/v1/query', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql: `${SQL} /* ${n} */` }) }),
  'SQL result range': (key, n) => api.get(`/api/v1/query.parquet?sql=${encodeURIComponent(`${SQL} /* r${n} */`)}`, { key, headers: { range: 'bytes=0-1023' } }),
  'export range': (key) => api.get('/api/v1/export/gutenberg?format=parquet', { key, headers: { range: 'bytes=0-65535' } }),
  'export download': (key) => api.get('/api/v1/export/census?format=csv', { key }),
  'MCP tools/call': (key) =>
    api.get('/mcp', { method: 'POST', key, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: mcpCall }),
};

interface Verdict {
  ok: boolean;
  /** An answer that tells the client to come back: 503 with Retry-After, or an MCP tool error saying when. */
  retryLater: boolean;
  said: string;
}

async function verdictOf(res: Response): Promise<Verdict> {
  const body = await res.text();
  const said = `${res.status} retry-after=${res.headers.get('retry-after')} ${body.slice(0, 200)}`;
  if (res.status === 503) return { ok: false, retryLater: Number(res.headers.get('retry-after')) > 0, said };
  if (res.status >= 300) return { ok: false, retryLater: false, said };
  const toolError = res.url.endsWith('/mcp') && (JSON.parse(body) as { result?: { isError?: boolean } }).result?.isError === true;
  if (toolError) return { ok: false, retryLater: /Retry after \d+ s/.test(body), said };
  return { ok: true, retryLater: false, said };
}

let serial = 0;
/** Sends every route for the accounts; the answers that are neither a success nor "retry later". */
async function wrongAnswers(keys: string[]): Promise<string[]> {
  const wrong: string[] = [];
  for (const [name, send] of Object.entries(ROUTES)) {
    for (const key of keys) {
      const verdict = await verdictOf(await send(key, ++serial));
      if (!verdict.ok && !verdict.retryLater) wrong.push(`${name}: ${verdict.said}`);
    }
  }
  return wrong;
}

/** Bounded: every route answers with a success again once the store is back. */
async function routesNotBack(key: string): Promise<string[]> {
  const notBack: string[] = [];
  for (const [name, send] of Object.entries(ROUTES)) {
    let verdict = await verdictOf(await send(key, ++serial));
    for (let attempt = 0; attempt < 100 && !verdict.ok; attempt++) {
      await new Promise((r) => setTimeout(r, 200));
      verdict = await verdictOf(await send(key, ++serial));
    }
    if (!verdict.ok) notBack.push(`${name}: ${verdict.said}`);
  }
  return notBack;
}

/** An account that has spent (its credit lease is in Redis) and one that has not. */
async function spentAndFresh(): Promise<string[]> {
  const spent = await api.account({ tier: 'pro', usd: '10' });
  const fresh = await api.account({ tier: 'pro', usd: '10' });
  expect(await routesNotBack(spent.apiKey)).toEqual([]);
  return [spent.apiKey, fresh.apiKey];
}

describe('a store that blinks: 503 with Retry-After, never 500', () => {
  it('PostgreSQL stopped: every route answers a success or 503 with Retry-After, and answers again once it is back', async () => {
    const keys = await spentAndFresh();
    await pg.stop();
    let wrong: string[];
    try {
      wrong = await wrongAnswers(keys);
    } finally {
      await pg.start();
    }
    expect(wrong).toEqual([]);
    expect(await routesNotBack(keys[1]!)).toEqual([]);
  }, 180_000);

  it('PostgreSQL restarted (every connection cut): the routes answer a success or 503 with Retry-After, then answer again', async () => {
    const keys = await spentAndFresh();
    // Requests in flight while the server restarts, and the first ones after it (the pool's connections are dead).
    const [during] = await Promise.all([wrongAnswers(keys), pg.restart()]);
    expect(during).toEqual([]);
    expect(await wrongAnswers(keys)).toEqual([]);
    expect(await routesNotBack(keys[1]!)).toEqual([]);
  }, 180_000);

  it('Redis stopped: every route answers a success or 503 with Retry-After, and answers again once it is back', async () => {
    const keys = await spentAndFresh();
    await redis.stop();
    let wrong: string[];
    try {
      wrong = await wrongAnswers(keys);
    } finally {
      await redis.start();
    }
    expect(wrong).toEqual([]);
    expect(await routesNotBack(keys[1]!)).toEqual([]);
  }, 180_000);
});
