/**
 * Capacity classes (DECISIONS §4): free floods cannot take SQL capacity from paying accounts, and a
 * caller's own excess is a 429, not our 503. Real API, runner, Redis, PostgreSQL and DuckDB.
 *
 * The "200 within 3 s" below is a bound on starvation, not a speed goal: each request is aborted
 * at its deadline and must have answered 200 by then. Before capacity classes, every other
 * account's SQL waited out the runner's queue (5 s) and answered 503 for as long as the flood held.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { counterValue } from '@uda/test-support/runner-harness';
import type { TestApi } from '@uda/test-support/api-harness';
import { openStack, type Stack } from '@uda/test-support/sql-stack';
import { DEFAULT_LIMITS } from '../limits.ts';

/** Quadratic in one scalar call: DuckDB cannot interrupt it; only killing its worker ends it. */
const SLOW_SQL = "SELECT levenshtein(repeat('ab', 200000), repeat('ba', 200000)) AS d";
const DEADLINE_MS = 3_000;
/** Every request of these tests comes from 127.0.0.1: the burst limit is not what they test. */
const limits = { burst: { points: 100_000, windowS: 900 } };

let stack: Stack;
beforeAll(async () => {
  // The runner's own deadline is shortened so the flood's runs end within the test; four workers, the default.
  stack = await openStack('classes', { runnerEnv: { QUERY_TIMEOUT_MS: '20000', QUERY_KILL_GRACE_MS: '500' } });
}, 120_000);
afterAll(() => stack.close());

const post = (api: TestApi, key: string, sql: string, signal?: AbortSignal) =>
  api.get('/api/v1/query', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql }), ...(signal ? { signal } : {}) });

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The status a request answered within the deadline, or 'no answer within 3 s'. */
async function within(deadlineMs: number, send: (signal: AbortSignal) => Promise<Response>): Promise<number | string> {
  try {
    const res = await send(AbortSignal.timeout(deadlineMs));
    await res.arrayBuffer();
    return res.status;
  } catch {
    return `no answer within ${deadlineMs / 1000} s`;
  }
}

/** Polls until the runner's workers run at least `n` queries (bounded; the assertions then tell). */
async function untilRunning(n: number, boundMs = 30_000): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (Date.now() < deadline && (await counterValue(stack.runners[0]!.metricsUrl, 'uda_queries_running')) < n) await pause(50);
}

describe('capacity classes', () => {
  it('eight parallel trivial queries of one free account while the runner is busy: the excess is a 429 QUERY_CONCURRENCY_LIMITED naming the tier\'s limit', async () => {
    const api = await stack.start({ limits });
    const busy = await Promise.all([api.account({ tier: 'pro' }), api.account({ tier: 'pro' })]);
    const client = await api.account();
    // Two Pro accounts keep every worker busy with slow queries, each within its own share.
    const stopBusy = new AbortController();
    const slow = Array.from({ length: 4 }, (_, i) => post(api, busy[i % 2]!.apiKey, `${SLOW_SQL} -- busy ${i}`, stopBusy.signal).catch(() => undefined));
    await untilRunning(4);
    const answers = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const res = await post(api, client.apiKey, `SELECT ${i} AS n`);
        return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Record<string, unknown> };
      }),
    );
    const limited = answers.filter((a) => a.status === 429);
    expect(limited.length).toBeGreaterThanOrEqual(8 - DEFAULT_LIMITS.fairShare.concurrent.free);
    for (const a of limited) {
      expect(a.body).toEqual({ status: 'error', code: 'QUERY_CONCURRENCY_LIMITED', message: expect.stringContaining('2 queries at once, the most the free tier allows') });
      expect(Number(a.retryAfter)).toBeGreaterThan(0);
    }
    // None of the answers is a 5xx of ours for the client's own parallelism.
    expect(answers.filter((a) => a.body.code === 'QUERY_BUSY')).toEqual([]);
    stopBusy.abort();
    await Promise.all(slow);
    await api.close();
  }, 120_000);

  it('under a flood from 4 free accounts (2 uninterruptible queries each, resent as they end), a Developer account\'s SQL and anonymous lookups answer 200 within 3 s every time', async () => {
    const api = await stack.start({ limits });
    const attackers = await Promise.all(Array.from({ length: 4 }, () => api.account()));
    const developer = await api.account({ tier: 'developer' });
    // A paying customer already using the service: its first query (this API's cold start) is not the flood's doing.
    expect((await post(api, developer.apiKey, 'SELECT count(*) AS n FROM census_states -- before the flood')).status).toBe(200);
    let flooding = true;
    let sent = 0;
    const flood = attackers.flatMap((attacker) =>
      Array.from({ length: DEFAULT_LIMITS.fairShare.concurrent.free }, async () => {
        while (flooding) await post(api, attacker.apiKey, `${SLOW_SQL} -- ${sent++}`).then((res) => res.arrayBuffer(), () => undefined);
      }),
    );
    // The flood holds every worker: the free class's share, and the paid class's idle ones it borrowed.
    await untilRunning(4);
    const sql: (number | string)[] = [];
    const lookups: (number | string)[] = [];
    for (let i = 0; i < 6; i++) {
      // A new text each time, so each one runs (a repeated text would be a stored re-read).
      sql.push(await within(DEADLINE_MS, (signal) => post(api, developer.apiKey, `SELECT count(*) AS n FROM census_states -- probe ${i}`, signal)));
      lookups.push(await within(DEADLINE_MS, (signal) => api.get(`/books/${['war', 'peace', 'pride', 'alice', 'moby', 'time'][i]}`, { signal })));
    }
    const stillFlooding = await counterValue(stack.runners[0]!.metricsUrl, 'uda_queries_running');
    flooding = false;
    expect({ sql, lookups }).toEqual({ sql: Array(6).fill(200), lookups: Array(6).fill(200) });
    // The flood was there all along: its free share of the workers still ran its queries at the end.
    expect(stillFlooding).toBeGreaterThanOrEqual(2);
    await Promise.all(flood);
    await api.close();
  }, 180_000);
});
