/**
 * The runner-time budget per sign-up address (DECISIONS §4 Fair shares): the Free accounts signed
 * up from one address share one budget for failed runs, on top of each account's own, so signing up
 * more accounts does not buy more runner time. Real sign-ups over HTTP, real PostgreSQL and Redis;
 * the runner's answer to a run that timed out is the RunnerError it sends (with the worker time).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RunnerError } from '@uda/shared/runner-contract';
import { openTestContext, type TestApi, type TestContext } from '@uda/test-support/api-harness';
import { DEFAULT_LIMITS } from '../limits.ts';

let ctx: TestContext;
let api: TestApi;
// Each account's own budget is large here, so only the address's can refuse; a long window, so the test never straddles two.
const fairShare = { ...DEFAULT_LIMITS.fairShare, budgetSeconds: { free: 600, developer: 600, pro: 1800 }, addressBudgetSeconds: 5, budgetWindowS: 1_000_000 };

beforeAll(async () => {
  ctx = await openTestContext();
  api = await ctx.start({ limits: { fairShare } });
}, 60_000);
afterAll(() => ctx.close());

async function signUp(): Promise<{ accountId: string }> {
  const email = `addr-${Math.random().toString(36).slice(2)}@example.com`;
  const res = await fetch(`${api.url}/dashboard/api/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: 'correct horse battery staple' }) });
  expect(res.status).toBe(201);
  const row = await ctx.db('accounts').where({ email }).first('id');
  return { accountId: row.id as string };
}

/** What a runner answers for a query that ran into its deadline: the worker time it took. */
const timedOut = (workerMs: number) => () => Promise.reject(new RunnerError('QUERY_TIMEOUT', 'too slow', undefined, workerMs));

describe('runner-time budget per sign-up address', () => {
  it('sign-up records the address, hashed: accounts from one address share it, admin-created ones have none', async () => {
    const [a, b] = [await signUp(), await signUp()];
    const admin = await api.account();
    const rows = await ctx.db('accounts').whereIn('id', [a.accountId, b.accountId, admin.accountId]).select('id', 'signup_address');
    const addressOf = (id: string) => rows.find((r) => r.id === id)?.signup_address as string | null;
    expect(addressOf(a.accountId)).toMatch(/^[0-9a-f]{32}$/);
    expect(addressOf(b.accountId)).toBe(addressOf(a.accountId));
    expect(addressOf(a.accountId)).not.toContain('127.0.0.1');
    expect(addressOf(admin.accountId)).toBeNull();
  });

  it('failed runs of one Free account spend the address\'s budget: another account from that address is refused with a 429 that says why', async () => {
    const [spender, sibling] = [await signUp(), await signUp()];
    const stranger = await api.account();
    const free = (accountId: string) => ({ accountId, tier: 'free' as const });
    await expect(api.services.fairShare.run(free(spender.accountId), timedOut(3_000))).rejects.toMatchObject({ code: 'QUERY_TIMEOUT' });
    await expect(api.services.fairShare.run(free(spender.accountId), timedOut(3_000))).rejects.toMatchObject({ code: 'QUERY_TIMEOUT' });
    // 6 runner-seconds of the address's 5 are spent; the sibling's own budget is untouched.
    const refused = await api.services.fairShare.run(free(sibling.accountId), async () => 'never').catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'RUNNER_BUDGET_EXCEEDED', status: 429, headers: { 'Retry-After': expect.stringMatching(/^\d+$/) } });
    expect((refused as Error).message).toMatch(/5 runner-seconds .* free accounts signed up from one address share .* until \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    // An account from elsewhere, and a paying account from the same address, keep their own budgets.
    expect(await api.services.fairShare.run(free(stranger.accountId), async () => 'ran')).toBe('ran');
    expect(await api.services.fairShare.run({ accountId: sibling.accountId, tier: 'developer' }, async () => 'ran')).toBe('ran');
  });
});
