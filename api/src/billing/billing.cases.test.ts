/**
 * Billing cases the model (`billing.model.test.ts`) found or stands on, each written out over real
 * PostgreSQL and Redis: an idle lease settling by itself, a pod dying with a hold's release unsent,
 * a result's maker after a refund, and a graceful shutdown's refund.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type TestContext, openTestContext, uniquePrefix } from '@uda/test-support/api-harness';
import { type TestBucket, createTestBucket } from '@uda/test-support/s3';
import { readouts, twoPods } from '../../test/support/billing-model/pods.ts';
import { COST, HELD_ROWS, LOOKUP_COST, ROW_COST, TTL_MS } from '../../test/support/billing-model/steps.ts';
import { AccountStore } from '../accounts/store.ts';
import { RedisLimiterBackend } from '../limiter/redis.ts';
import { Billing } from './billing.ts';
import { exportWindow, sqlWindow } from './charge-keys.ts';
import { MemoryDeliveryTracker } from './deliveries.ts';
import { RedisDeliveryTracker } from './deliveries-redis.ts';
import { LEASE_TTL_MS, LeaseBook } from './leases.ts';
import { Ledger } from './ledger.ts';
import { startBillingLoops } from './loops.ts';
import { RedisWallet } from './wallet-redis.ts';

let ctx: TestContext;
let bucket: TestBucket;
beforeAll(async () => {
  ctx = await openTestContext();
  bucket = await createTestBucket('cases');
});
afterAll(async () => {
  await bucket.remove();
  await ctx.close();
});

describe('billing cases', () => {
  it('an idle account\'s lease settles by itself once its life is over, and every readout says the same before and after', async () => {
    const accounts = new AccountStore(ctx.db);
    const ledger = new Ledger(ctx.db, accounts);
    const prefix = uniquePrefix();
    // A one-second lease, so the wait is short; the real clock, so nothing but the reconciler settles it.
    const leases = new LeaseBook(ctx.db, Date.now, 1_000);
    const pods = [0, 1].map(() => new Billing({ ledger, leases, wallet: new RedisWallet({ redis: ctx.redis, prefix }), deliveries: new RedisDeliveryTracker({ redis: ctx.redis, prefix }) }));
    const account = await accounts.create({ email: 'idle@example.com', tier: 'developer' });
    const payer = { accountId: account.id, tier: account.tier };
    for (const pod of [0, 1, 0]) await (await pods[pod]!.deliverOnce(payer, { costMicro: LOOKUP_COST })).complete();
    const deposited = account.grantMicro;
    const openLeases = async () => Number((await ctx.db('credit_leases').where({ account_id: account.id }).whereNull('settled_at').count<{ n: string }[]>({ n: '*' }))[0]?.n);
    expect(await openLeases()).toBe(1);
    await Promise.all(pods.map((pod) => pod.writesDone()));
    const before = await readouts(ctx, pods, account, deposited);
    expect(before).toEqual(Array(before.length).fill(deposited - 3 * LOOKUP_COST));
    // Each pod runs its own loops (its journal's flush); pod 1's reconciler settles the lease.
    const loops = pods.map((pod) => startBillingLoops(pod, 100));
    try {
      for (let i = 0; i < 2_400 && (await openLeases()) > 0; i++) await new Promise((r) => setTimeout(r, 25));
      expect(await openLeases()).toBe(0);
      expect(await readouts(ctx, pods, account, deposited)).toEqual(before);
      // Settled: the buckets alone are the balance now.
      expect(await accounts.balance(account.id)).toBe(before[0]);
    } finally {
      for (const loop of loops) loop.stop();
      for (const pod of pods) await pod.drain(0);
    }
  }, 120_000);

  it('a pod that dies with a hold\'s release and its charge unsent: the reconciler releases the hold, the charge is forgiven, and the readouts agree', async () => {
    const { pods, clocks } = twoPods(ctx, bucket);
    const accounts = new AccountStore(ctx.db);
    const account = await accounts.create({ email: 'dead-hold@example.com', tier: 'developer' });
    const payer = { accountId: account.id, tier: account.tier };
    const limiter = new RedisLimiterBackend({ client: ctx.redis, prefix: uniquePrefix() });
    // A lease first (the usual way), so the hold finds credit in the wallet.
    await (await pods[1]!.deliverOnce(payer, { costMicro: LOOKUP_COST })).complete();
    await pods[1]!.flush();
    const before = await pods[1]!.balance(account.id);
    const plan = pods[0]!.planHold(payer, HELD_ROWS * ROW_COST);
    const hold = await plan.made((await limiter.takeWith([], plan.rider!)).reply);
    expect(hold?.balanceMicro).toBe(before);
    const delivery = await pods[0]!.deliverOnce(payer, { costMicro: 2 * ROW_COST }, hold);
    expect(delivery.settlement).toEqual({ chargedMicro: 2 * ROW_COST, balanceMicro: before - 2 * ROW_COST });
    // Pod 0 dies here: its release never leaves, and its journal holds the charge: a SIGKILL forgives it.
    expect(pods[0]!.unsentReleases()).toEqual([delivery.chargeKey]);
    expect(pods[0]!.unacked().map((e) => e.key)).toEqual([delivery.chargeKey]);
    // The hold still counts as the account's credit.
    expect(await pods[1]!.balance(account.id)).toBe(before);
    clocks.deliveries += TTL_MS + 1;
    await pods[1]!.reconcile();
    clocks.leases += LEASE_TTL_MS + 1;
    await pods[1]!.reconcile();
    expect(await accounts.balance(account.id)).toBe(before);
    expect(await ctx.db('ledger').where({ account_id: account.id, kind: 'charge' }).sum<{ s: string }[]>({ s: 'amount_micro' })).toEqual([{ s: String(LOOKUP_COST) }]);
  });

  it('a result\'s maker whose first charge key was refunded meanwhile charges anew under the next key, whichever tracker it has', async () => {
    const accounts = new AccountStore(ctx.db);
    const ledger = new Ledger(ctx.db, accounts);
    const prefix = uniquePrefix();
    const shared = { ledger, leases: new LeaseBook(ctx.db), wallet: new RedisWallet({ redis: ctx.redis, prefix }) };
    const pod = new Billing({ ...shared, deliveries: new RedisDeliveryTracker({ redis: ctx.redis, prefix }) });
    // A pod whose Redis is down tracks deliveries in its own memory: it cannot see the refund there.
    const cutOff = new Billing({ ...shared, deliveries: new MemoryDeliveryTracker() });
    const account = await accounts.create({ email: 'maker@example.com', tier: 'developer' });
    const payer = { accountId: account.id, tier: account.tier };
    for (const [i, maker] of [pod, cutOff].entries()) {
      const window = sqlWindow(account.id, `q${i}`, 't1');
      const reader = await pod.deliverWindow(payer, window, { costMicro: COST, carriesBytes: true });
      await reader.abandon();
      const made = await maker.deliverWindow(payer, window, { costMicro: COST, carriesBytes: true, madeResult: true });
      expect(made.settlement.chargedMicro).toBe(COST);
      expect(made.chargeKey).toBe(`${window.base}#1`);
      await made.complete();
    }
  });

  it('a graceful shutdown writes the refund of a download its SIGTERM cut, before the pod exits', async () => {
    const accounts = new AccountStore(ctx.db);
    const ledger = new Ledger(ctx.db, accounts);
    const prefix = uniquePrefix();
    const pod = new Billing({
      ledger,
      leases: new LeaseBook(ctx.db),
      wallet: new RedisWallet({ redis: ctx.redis, prefix }),
      deliveries: new RedisDeliveryTracker({ redis: ctx.redis, prefix }),
    });
    const account = await accounts.create({ email: 'drain@example.com', tier: 'free' });
    const payer = { accountId: account.id, tier: account.tier };
    const delivery = await pod.deliverWindow(payer, exportWindow(account.id, 'exports/v1/service.db', 86_400_000), { costMicro: 1_000_000, carriesBytes: true });
    expect(delivery.settlement.chargedMicro).toBe(1_000_000);
    // The server closed every connection; this response's close event never came before the drain.
    await pod.drain(0);
    // The charge (spent from the account's lease) and its refund are in the ledger; the lease stays for the other pods.
    const kinds = ((await ctx.db('ledger').where({ account_id: account.id }).whereNot('kind', 'like', 'lease%').orderBy('id').select('kind')) as { kind: string }[]).map((r) => r.kind);
    expect(kinds).toEqual(['charge', 'refund']);
    expect(await pod.balance(account.id)).toBe(5_000_000);
    await pod.settleOpenLease(account.id);
    expect(await accounts.balance(account.id)).toBe(5_000_000);
  });
});
