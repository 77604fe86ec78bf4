/**
 * Fair shares of runner capacity: one account's uninterruptible queries must not stall
 * lookups or other accounts' SQL, a query the API stopped waiting for must free its worker, and
 * runner time spent on failed runs counts against an hourly budget.
 *
 * The API's runner deadline (QUERY_RUNNER_TIMEOUT_MS) is short here and the runner's own deadline
 * long, so "the API gave up while the runner still works" is the case every test meets quickly.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { counterValue } from '@uda/test-support/runner-harness';
import { DEFAULT_LIMITS } from '../limits.ts';
import type { TestApi } from '@uda/test-support/api-harness';
import { ledgerOf, openStack, type Stack } from '@uda/test-support/sql-stack';

/** Quadratic in one scalar call: DuckDB cannot interrupt it; only killing its worker ends it. */
const SLOW_SQL = "SELECT levenshtein(repeat('ab', 200000), repeat('ba', 200000)) AS d";
// Long enough for a cheap query on a loaded machine (a fresh worker may have to start), far below the runner's own minute.
const API_DEADLINE = { QUERY_RUNNER_TIMEOUT_MS: '8000' };

let stack: Stack;
beforeAll(async () => {
  stack = await openStack('fairshare', { runnerEnv: { QUERY_TIMEOUT_MS: '60000', QUERY_KILL_GRACE_MS: '500', QUERY_QUEUE_WAIT_MS: '1000' } });
}, 120_000);
afterAll(() => stack.close());

const post = (api: TestApi, key: string, sql: string, signal?: AbortSignal) =>
  api.get('/api/v1/query', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql }), ...(signal ? { signal } : {}) });

/** MCP `search_service` as a client sends it: one JSON-RPC call over Streamable HTTP, JSON answer. */
const searchTool = (api: TestApi, key: string) =>
  api.get('/mcp', {
    method: 'POST',
    key,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_service', arguments: { source: 'books', query: 'war', limit: 3 } } }),
  });

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const gauge = (name: string) => counterValue(stack.runners[0]!.metricsUrl, name);

/** Polls until the runner runs at least `n` queries (or the bound passes: the test's own assertions then tell). */
async function untilRunning(n: number, boundMs = 20_000): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (Date.now() < deadline && (await gauge('uda_queries_running')) < n) await pause(50);
}

/** Polls until the runner holds no query, running or queued; false if it still does after the bound. */
async function untilIdle(boundMs: number): Promise<boolean> {
  const deadline = Date.now() + boundMs;
  while (Date.now() < deadline) {
    if ((await gauge('uda_queries_running')) === 0 && (await gauge('uda_queries_queued')) === 0) return true;
    await pause(100);
  }
  return false;
}

async function answer(response: Promise<Response>) {
  const res = await response;
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Record<string, unknown> };
}

describe('fair shares of runner capacity', () => {
  it('one account sending 8 uninterruptible queries: lookups and other accounts\' SQL are still answered', async () => {
    const api = await stack.start({ config: API_DEADLINE });
    const attacker = await api.account();
    const other = await api.account();
    const attack = Array.from({ length: 8 }, (_, i) => answer(post(api, attacker.apiKey, `${SLOW_SQL} -- ${i}`)));
    await untilRunning(2);
    const [anonymousLookup, accountLookup, cheapSql, mcpSearch] = await Promise.all([
      answer(api.get('/books/war')),
      answer(api.get('/books/war', { key: other.apiKey })),
      answer(post(api, other.apiKey, 'SELECT count(*) AS n FROM gutenberg')),
      answer(searchTool(api, other.apiKey)),
    ]);
    expect(anonymousLookup.status).toBe(200);
    expect(accountLookup.status).toBe(200);
    expect(cheapSql.status).toBe(200);
    expect(mcpSearch.status).toBe(200);
    expect(mcpSearch.body).toMatchObject({ result: { content: [expect.objectContaining({ type: 'text' })] } });
    expect((mcpSearch.body.result as { isError?: boolean }).isError).not.toBe(true);
    // The attacker holds at most its tier's running queries; the rest are its own excess: a 429 (not
    // our failure) that names the tier's limit, promptly, in the flat shape.
    const refused = (await Promise.all(attack)).filter((a) => a.body.code === 'QUERY_CONCURRENCY_LIMITED');
    expect(refused.length).toBeGreaterThanOrEqual(8 - DEFAULT_LIMITS.fairShare.concurrent.free);
    for (const a of refused) {
      expect(a.status).toBe(429);
      expect(Number(a.retryAfter)).toBeGreaterThan(0);
      expect(a.body).toEqual({ status: 'error', code: 'QUERY_CONCURRENCY_LIMITED', message: expect.stringContaining('2 queries at once, the most the free tier allows') });
    }
    expect(await ledgerOf(stack.ctx, attacker.accountId)).toHaveLength(0);
    expect(await untilIdle(30_000)).toBe(true);
    // Every running-query token came back: the attacker's next query runs.
    expect((await post(api, attacker.apiKey, 'SELECT 1 AS one')).status).toBe(200);
    await api.close();
  });

  it('the same attack from 10 accounts at their full concurrency: lookups work, other SQL works or is a 503 with Retry-After', async () => {
    const api = await stack.start({ config: API_DEADLINE });
    const attackers = await Promise.all(Array.from({ length: 10 }, () => api.account()));
    const other = await api.account();
    const perAccount = DEFAULT_LIMITS.fairShare.concurrent.free;
    const attack = attackers.flatMap((a, i) => Array.from({ length: perAccount }, (_, j) => answer(post(api, a.apiKey, `${SLOW_SQL} -- ${i}.${j}`))));
    await untilRunning(4);
    const [lookup, sql] = await Promise.all([answer(api.get('/books/war')), answer(post(api, other.apiKey, 'SELECT count(*) AS n FROM census_states'))]);
    expect(lookup.status).toBe(200);
    if (sql.status !== 200) {
      expect(sql.status).toBe(503);
      expect(Number(sql.retryAfter)).toBeGreaterThan(0);
    }
    for (const a of await Promise.all(attack)) {
      expect(a.status).toBe(503);
      expect(Number(a.retryAfter)).toBeGreaterThan(0);
    }
    expect(await untilIdle(30_000)).toBe(true);
    await api.close();
  });

  it('runner time of failed runs counts against the hourly budget: once spent, a 429 that says why and when', async () => {
    // A long window, so the test never straddles two of them.
    const fairShare = { ...DEFAULT_LIMITS.fairShare, budgetSeconds: { free: 2, developer: 600, pro: 1800 }, budgetWindowS: 1_000_000 };
    const api = await stack.start({ config: API_DEADLINE, limits: { fairShare } });
    const spender = await api.account();
    const other = await api.account();
    const failed = await answer(post(api, spender.apiKey, `${SLOW_SQL} -- budget`));
    expect(failed.status).toBe(503);
    const refused = await answer(post(api, spender.apiKey, 'SELECT 1 AS one'));
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ status: 'error', code: 'RUNNER_BUDGET_EXCEEDED', message: expect.stringMatching(/timed out .* 2 runner-seconds .* until \d{4}-\d\d-\d\d \d\d:\d\d UTC/) });
    expect(Number(refused.retryAfter)).toBeGreaterThan(0);
    expect(Number(refused.retryAfter)).toBeLessThanOrEqual(1_000_000);
    // Errors stay unbilled, and the refusal gave back its daily-cap count.
    expect(await ledgerOf(stack.ctx, spender.accountId)).toHaveLength(0);
    expect((await post(api, other.apiKey, 'SELECT 1 AS one')).status).toBe(200);
    expect(await untilIdle(30_000)).toBe(true);
    await api.close();
  });

  it('when the API stops waiting (its deadline, or the client went away), the runner frees the worker', async () => {
    const api = await stack.start({ config: API_DEADLINE });
    const { apiKey } = await api.account();
    const timedOut = await answer(post(api, apiKey, `${SLOW_SQL} -- deadline`));
    expect(timedOut.status).toBe(503);
    // The runner's own deadline is a minute away; its slot comes back long before that.
    expect(await untilIdle(15_000)).toBe(true);

    const client = new AbortController();
    const gone = post(api, apiKey, `${SLOW_SQL} -- gone`, client.signal).catch(() => undefined);
    await untilRunning(1);
    client.abort();
    await gone;
    expect(await untilIdle(15_000)).toBe(true);
    await api.close();
  });
});
