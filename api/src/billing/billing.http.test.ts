import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type TestContext, openTestContext } from '@uda/test-support/api-harness';
import { testRoutes } from '../../test/support/test-routes.ts';
import { readUsageLog } from '../../test/support/usage-log.ts';
import type { TestApi } from '@uda/test-support/api-harness';

/** The journal written and the usage log stored: the ledger rows and the per-request records of these accounts. */
async function written(api: TestApi, accountIds: string[]) {
  await api.services.billing.flush();
  await api.services.billing.storeUsage();
  const ledger = await ctx.db('ledger').whereIn('account_id', accountIds).where({ kind: 'charge' }).orderBy('id');
  const usage = (await readUsageLog(api.services.store, '')).filter((r) => accountIds.includes(r.account_id));
  return { ledger, usage };
}

let ctx: TestContext;
beforeAll(async () => {
  ctx = await openTestContext();
});
afterAll(async () => {
  await ctx.close();
});

describe('metering', () => {
  it('charges the catalog price for the tier after the result, with decimal USD headers', async () => {
    const api = await ctx.start({ extraRoutes: testRoutes });
    const free = await api.account({ tier: 'free' });
    const res = await api.get('/test/lookup/x?rows=2&cls=encyclopedia', { key: free.apiKey });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-credit-cost')).toBe('0.05');
    expect(res.headers.get('x-credits-remaining')).toBe('4.95');
    const pro = await api.account({ tier: 'pro' });
    const proRes = await api.get('/test/lookup/x?rows=1&cls=encyclopedia', { key: pro.apiKey });
    expect(proRes.headers.get('x-credit-cost')).toBe('0.0125');
    expect(proRes.headers.get('x-credits-remaining')).toBe('98.9875');
    // The ledger holds the flush's one row for the account; the usage log the request's record.
    const { ledger, usage } = await written(api, [free.accountId]);
    expect(ledger).toHaveLength(1);
    expect(ledger[0]).toMatchObject({ kind: 'charge', amount_micro: '50000', requests: 1 });
    expect(usage).toEqual([
      expect.objectContaining({ request_id: res.headers.get('x-request-id'), source: 'gutenberg', rows: 2, cost_micro: 50_000, ledger_key: ledger[0].idempotency_key, forgiven: false }),
    ]);
    expect(usage[0]!.key_id).toEqual(expect.any(String));
    expect(usage[0]!.route).toContain('/test/lookup');
    await api.close();
  });

  it('never charges anonymous callers or errors, and charges nothing for zero rows', async () => {
    const api = await ctx.start({ extraRoutes: testRoutes });
    const anon = await api.get('/test/lookup/x?rows=3');
    expect(anon.status).toBe(200);
    expect(anon.headers.get('x-credit-cost')).toBeNull();
    const { accountId, apiKey } = await api.account();
    expect((await api.get('/test/lookup/x?fail=400', { key: apiKey })).status).toBe(400);
    expect((await api.get('/test/lookup/x?fail=500', { key: apiKey })).status).toBe(500);
    const zero = await api.get('/test/lookup/x?rows=0', { key: apiKey });
    expect(zero.headers.get('x-credit-cost')).toBe('0');
    expect(zero.headers.get('x-credits-remaining')).toBe('5');
    expect(await ctx.db('ledger').where({ account_id: accountId })).toHaveLength(0);
    await api.close();
  });

  it('answers 402 at zero balance before any work until a top-off; a refund goes back once', async () => {
    const api = await ctx.start({ extraRoutes: testRoutes });
    const { accountId, apiKey } = await api.account({ usd: '0.01' });
    const first = await api.get('/test/lookup/x?rows=2', { key: apiKey });
    expect(first.headers.get('x-credit-cost')).toBe('0.01');
    expect(first.headers.get('x-credits-remaining')).toBe('0');
    const refused = await api.get('/test/lookup/x?rows=1', { key: apiKey });
    expect(refused.status).toBe(402);
    expect(refused.headers.get('x-credit-cost')).toBe('0');
    // An operator refunds the request's charge by its key, as the usage log names it.
    const { usage } = await written(api, [accountId]);
    const chargeKey = usage[0]!.charge_key;
    expect(await api.services.billing.refundLookup(chargeKey)).toBe(10_000);
    expect(await api.services.billing.refundLookup(chargeKey)).toBe(0);
    expect(await api.services.billing.balance(accountId)).toBe(10_000);
    // The refunded credit went back to the account's lease: settle it before the operator zeroes the grant.
    await api.services.billing.settleOpenLease(accountId);
    expect(await api.services.accounts.balance(accountId)).toBe(10_000);
    await api.services.accounts.setGrant(accountId, 0);
    expect((await api.get('/test/lookup/x?rows=1', { key: apiKey })).status).toBe(402);
    await api.services.accounts.addTopoff(accountId, 1_000_000);
    const after = await api.get('/test/lookup/x?rows=1', { key: apiKey });
    expect(after.status).toBe(200);
    expect(after.headers.get('x-credits-remaining')).toBe('0.995');
    await api.close();
  });

  it('mints every charge key itself: a client-sent X-Request-Id never makes a lookup a duplicate, in any account', async () => {
    const api = await ctx.start({ extraRoutes: testRoutes });
    const a = await api.account();
    const b = await api.account();
    const headers = { 'x-request-id': 'same' };
    for (const { apiKey } of [a, a, a, b]) {
      const res = await api.get('/test/lookup/x?rows=1', { key: apiKey, headers });
      expect(res.headers.get('x-credit-cost')).toBe('0.005');
    }
    const { ledger, usage } = await written(api, [a.accountId, b.accountId]);
    // Three charges for a, one for b, each under its own key; the ledger holds one row per account (the flush's).
    expect(new Set(usage.filter((r) => r.account_id === a.accountId).map((r) => r.charge_key)).size).toBe(3);
    expect(usage.filter((r) => r.account_id === b.accountId)).toHaveLength(1);
    expect(ledger.map((r) => [r.account_id, r.requests])).toEqual(expect.arrayContaining([[a.accountId, 3], [b.accountId, 1]]));
    for (const key of [...usage.map((r) => ({ key: r.charge_key, account: r.account_id })), ...ledger.map((r) => ({ key: r.idempotency_key as string, account: r.account_id as string }))]) {
      expect(key.key).toContain(key.account);
      expect(key.key).not.toContain('same');
    }
    await api.close();
  });
});
