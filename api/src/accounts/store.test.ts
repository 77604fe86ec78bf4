import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type TestContext, openTestContext } from '@uda/test-support/api-harness';
import { Ledger } from '../billing/index.ts';
import { AccountStore } from './store.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await openTestContext();
});
afterAll(async () => {
  await ctx.close();
});

describe('account store and ledger', () => {
  it('spends the grant first, then the top-off, and refuses what the balance cannot cover', async () => {
    const accounts = new AccountStore(ctx.db);
    const ledger = new Ledger(ctx.db, accounts);
    const { id } = await accounts.create({ email: 'a@example.com', tier: 'free' });
    await accounts.setGrant(id, 100);
    await accounts.addTopoff(id, 50);
    expect(await ledger.charge({ accountId: id, amountMicro: 120, idempotencyKey: `${id}:1` })).toEqual({
      ok: true,
      chargedMicro: 120,
      balanceMicro: 30,
      // The charge's own statement reports the buckets it left, so no read follows it.
      buckets: { micro: 30, version: 3 },
      duplicate: false,
    });
    expect(await accounts.mustGet(id)).toMatchObject({ grantMicro: 0, topoffMicro: 30 });
    expect(await ledger.charge({ accountId: id, amountMicro: 31, idempotencyKey: `${id}:2` })).toEqual({ ok: false, balanceMicro: 30 });
  });

  it('is idempotent per key and refunds once, to the buckets charged', async () => {
    const accounts = new AccountStore(ctx.db);
    const ledger = new Ledger(ctx.db, accounts);
    const { id } = await accounts.create({ email: 'b@example.com', tier: 'developer' });
    await accounts.setGrant(id, 10);
    await accounts.addTopoff(id, 10);
    await ledger.charge({ accountId: id, amountMicro: 15, idempotencyKey: `${id}:x` });
    const again = await ledger.charge({ accountId: id, amountMicro: 15, idempotencyKey: `${id}:x` });
    expect(again).toMatchObject({ ok: true, duplicate: true, balanceMicro: 5 });
    expect(await ledger.refund(`${id}:x`)).toBe(15);
    expect(await ledger.refund(`${id}:x`)).toBe(0);
    expect(await accounts.mustGet(id)).toMatchObject({ grantMicro: 10, topoffMicro: 10 });
    expect(await ledger.refund('no-such-charge')).toBe(0);
  });

  it('resets the grant lazily and idempotently at the UTC month boundary, keeping the top-off', async () => {
    let now = new Date('2026-10-31T23:59:00Z');
    const accounts = new AccountStore(ctx.db, () => now);
    const ledger = new Ledger(ctx.db, accounts, () => now);
    const { id } = await accounts.create({ email: 'c@example.com', tier: 'free' });
    await accounts.addTopoff(id, 1_000);
    await ledger.charge({ accountId: id, amountMicro: 4_000_000, idempotencyKey: `${id}:oct` });
    expect(await accounts.balance(id)).toBe(1_001_000);
    now = new Date('2026-11-01T00:00:01Z');
    expect(await accounts.balance(id)).toBe(5_001_000);
    expect(await accounts.balance(id)).toBe(5_001_000);
    await ledger.charge({ accountId: id, amountMicro: 1_000_000, idempotencyKey: `${id}:nov` });
    expect(await accounts.mustGet(id)).toMatchObject({ grantMicro: 4_000_000, topoffMicro: 1_000 });
    // A refund of last month's charge can't go back to a grant that has been reset: it goes to the top-off.
    expect(await ledger.refund(`${id}:oct`)).toBe(4_000_000);
    expect(await accounts.mustGet(id)).toMatchObject({ grantMicro: 4_000_000, topoffMicro: 4_001_000 });
  });

  it('applies top-ups and plan changes at once', async () => {
    const accounts = new AccountStore(ctx.db);
    const { id } = await accounts.create({ email: 'd@example.com', tier: 'free' });
    await accounts.setGrant(id, 0);
    expect(await accounts.balance(id)).toBe(0);
    await accounts.addTopoff(id, 2_500_000);
    expect(await accounts.balance(id)).toBe(2_500_000);
    expect(await accounts.setTier(id, 'pro')).toMatchObject({ tier: 'pro', grantMicro: 99_000_000 });
  });

  it('rejects a negative balance at the database level', async () => {
    const { id } = await new AccountStore(ctx.db).create({ email: 'e@example.com', tier: 'free' });
    await expect(ctx.db('accounts').where({ id }).update({ topoff_micro: -1 })).rejects.toThrow(/topoff_nonneg/);
  });
});
