/**
 * Credit leases (index.ts rule 7) over real PostgreSQL, with the Redis wallet and with the
 * embedded default's in-process one: a caller sees its exact balance through lookups, SQL charges,
 * top-ups and refunds; a small balance is leased whole and never goes negative; and an API process
 * SIGKILLed under load loses no money and gives none away once another pod's reconciler settles,
 * and every charge of it in the ledger has its usage record once another pod stores the log.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type TestContext, TEST_REDIS_URL, openTestContext, uniquePrefix } from '@uda/test-support/api-harness';
import { createTestBucket } from '@uda/test-support/s3';
import { readUsageLog } from '../../test/support/usage-log.ts';
import { startNode, stopNode } from '../../test/support/spawn.ts';
import { testRoutes } from '../../test/support/test-routes.ts';
import { join } from 'node:path';
import { AccountStore } from '../accounts/store.ts';
import { ApiError } from '../errors/api-error.ts';
import { Billing } from './billing.ts';
import { sqlWindow } from './charge-keys.ts';
import { MemoryDeliveryTracker } from './deliveries.ts';
import { LEASE_TTL_MS, LeaseBook, leaseSize } from './leases.ts';
import { Ledger } from './ledger.ts';
import { MemoryWallet } from './wallet-memory.ts';
import type { Wallet } from './wallet.ts';
import { RedisWallet } from './wallet-redis.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await openTestContext();
});
afterAll(() => ctx.close());

/** One pod as services.ts builds it, its lease clock movable to expire leases. */
function pod(wallet: Wallet, clock = { offsetMs: 0 }) {
  const accounts = new AccountStore(ctx.db);
  const billing = new Billing({
    ledger: new Ledger(ctx.db, accounts),
    leases: new LeaseBook(ctx.db, () => Date.now() + clock.offsetMs),
    wallet,
    deliveries: new MemoryDeliveryTracker(),
  });
  accounts.onBalanceChange(async (id) => void (await billing.refreshBuckets(id)));
  return { accounts, billing, clock };
}

async function ledgerNet(accountId: string): Promise<number> {
  const [row] = (await ctx.db('ledger').where({ account_id: accountId }).whereIn('kind', ['charge', 'refund']).sum({ net: 'amount_micro' })) as { net: string | null }[];
  return Number(row?.net ?? 0);
}

const wallets: [string, () => Wallet][] = [
  ['the Redis wallet', () => new RedisWallet({ redis: ctx.redis, prefix: uniquePrefix() })],
  ['the in-process wallet', () => new MemoryWallet()],
];

describe.each(wallets)('credit leases with %s', (_name, makeWallet) => {
  it("reports the exact remaining balance through a caller's lookups, SQL charges, top-ups and refunds, and PostgreSQL agrees after settling", async () => {
    const { accounts, billing } = pod(makeWallet());
    const account = await accounts.create({ email: 'exact@example.com', tier: 'developer' });
    await accounts.setGrant(account.id, 1_000_000);
    const payer = { accountId: account.id, tier: account.tier };
    let expected = 1_000_000;
    const lookup = async (cost: number) => {
      const delivery = await billing.deliverOnce(payer, { costMicro: cost });
      expected -= cost;
      expect(delivery.settlement).toEqual({ chargedMicro: cost, balanceMicro: expected });
      return delivery;
    };

    for (let i = 0; i < 5; i++) await (await lookup(5_000)).complete();
    const sql = await billing.deliverWindow(payer, sqlWindow(account.id, 'q1', 't1'), { costMicro: 30_000, carriesBytes: true });
    expected -= 30_000;
    expect(sql.settlement).toEqual({ chargedMicro: 30_000, balanceMicro: expected });
    await sql.complete();
    await lookup(7_000);

    await accounts.addTopoff(account.id, 100_000);
    expected += 100_000;
    await lookup(5_000);

    // A broken response still in the pending log goes back to the wallet ...
    const broken = await lookup(5_000);
    expected += 5_000;
    expect((await broken.abandon()).balanceMicro).toBe(expected);
    // ... one already in the ledger is refunded there, into the open lease ...
    const flushed = await lookup(5_000);
    await billing.flush();
    expected += 5_000;
    expect((await flushed.abandon()).balanceMicro).toBe(expected);
    // ... and one whose lease settled meanwhile goes back to the buckets.
    const late = await lookup(5_000);
    await billing.settleOpenLease(account.id);
    expected += 5_000;
    expect((await late.abandon()).balanceMicro).toBe(expected);
    await lookup(5_000);
    expect(await billing.balance(account.id)).toBe(expected);

    await billing.settleOpenLease(account.id);
    expect(await accounts.balance(account.id)).toBe(expected);
    expect(await ledgerNet(account.id)).toBe(1_100_000 - expected);
  });

  it('leases a small balance whole, answers 402 for the lookup it cannot cover, and never goes negative', async () => {
    const { accounts, billing } = pod(makeWallet());
    const account = await accounts.create({ email: 'small@example.com', tier: 'free' });
    await accounts.setGrant(account.id, 12_000);
    const payer = { accountId: account.id, tier: account.tier };
    const results = await Promise.allSettled(Array.from({ length: 4 }, () => billing.deliverOnce(payer, { costMicro: 5_000 })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toBeInstanceOf(ApiError);
    expect((refused.reason as ApiError).status).toBe(402);
    // An SQL charge the buckets can't cover takes the lease's credit back first.
    await expect(billing.deliverWindow(payer, sqlWindow(account.id, 'q', 't'), { costMicro: 2_000, carriesBytes: true })).resolves.toMatchObject({
      settlement: { chargedMicro: 2_000, balanceMicro: 0 },
    });
    await billing.settleOpenLease(account.id);
    expect(await accounts.balance(account.id)).toBe(0);
    expect(await ledgerNet(account.id)).toBe(12_000);
  });

  it('serves concurrent lookups after their lease was settled, never answering 402 while the balance covers them', async () => {
    const { accounts, billing } = pod(makeWallet());
    const account = await accounts.create({ email: 'resettled@example.com', tier: 'pro' });
    await accounts.addTopoff(account.id, 1_000_000_000_000);
    const payer = { accountId: account.id, tier: account.tier };
    const refused: unknown[] = [];
    for (let round = 0; round < 8; round++) {
      const results = await Promise.allSettled(Array.from({ length: 50 }, () => billing.deliverOnce(payer, { costMicro: 4_000 })));
      refused.push(...results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason));
      await billing.settleOpenLease(account.id);
    }
    expect(refused).toEqual([]);
  });

  it('serves every lookup the balance covers, even when its credit is split between the lease and the buckets', async () => {
    const { accounts, billing } = pod(makeWallet());
    const account = await accounts.create({ email: 'split@example.com', tier: 'free' });
    // Fifty lookups' worth: more than a small balance, so leases take slices of it, not all of it.
    await accounts.setGrant(account.id, 50 * 4_000);
    const payer = { accountId: account.id, tier: account.tier };
    let served = 0;
    for (let i = 0; i < 50; i++) {
      await (await billing.deliverOnce(payer, { costMicro: 4_000 })).complete();
      served++;
    }
    expect(served).toBe(50);
    await expect(billing.deliverOnce(payer, { costMicro: 4_000 })).rejects.toMatchObject({ status: 402 });
    await billing.settleOpenLease(account.id);
    expect(await accounts.balance(account.id)).toBe(0);
    expect(await ledgerNet(account.id)).toBe(50 * 4_000);
  });

  it('settles an expired lease from any pod, and a second settlement changes nothing', async () => {
    const wallet = makeWallet();
    const first = pod(wallet);
    // The other pod shares the wallet (Redis, or the same process) and its clock is past the expiry.
    const other = pod(wallet, { offsetMs: LEASE_TTL_MS + 1 });
    const account = await first.accounts.create({ email: 'expiry@example.com', tier: 'developer' });
    const payer = { accountId: account.id, tier: account.tier };
    const start = await first.billing.balance(account.id);
    for (let i = 0; i < 3; i++) await first.billing.deliverOnce(payer, { costMicro: 10_000 });
    await other.billing.reconcile();
    await other.billing.reconcile();
    // The first pod's next flush writes its charges, which arrive after their lease settled: on the buckets.
    await first.billing.flush();
    expect(await first.accounts.balance(account.id)).toBe(start - 30_000);
    expect(await ctx.db('credit_leases').where({ account_id: account.id }).whereNull('settled_at')).toHaveLength(0);
    expect(await ledgerNet(account.id)).toBe(30_000);
  });
});

describe('lease size', () => {
  it('takes about ten seconds of spend, at least twenty requests, at most half the balance, and all of a small one', () => {
    expect(leaseSize({ costMicro: 1_000, spendPerSecondMicro: 0, balanceMicro: 1_000_000_000 })).toBe(20_000);
    expect(leaseSize({ costMicro: 1_000, spendPerSecondMicro: 50_000, balanceMicro: 1_000_000_000 })).toBe(500_000);
    expect(leaseSize({ costMicro: 1_000, spendPerSecondMicro: 50_000, balanceMicro: 600_000 })).toBe(300_000);
    expect(leaseSize({ costMicro: 1_000, spendPerSecondMicro: 50_000, balanceMicro: 40_000 })).toBe(40_000);
    expect(leaseSize({ costMicro: 1_000, spendPerSecondMicro: 0, balanceMicro: 30_000 })).toBe(30_000);
  });
});

describe('an API process SIGKILLed under load', () => {
  it('gives no money away, loses at most what its journal held, and leaves a usage record of every charge in the ledger: another pod settles and stores', async () => {
    const prefix = uniquePrefix();
    // Both pods write the usage log to one bucket, as a deployment's pods do.
    const bucket = await createTestBucket('sigkill');
    const api = await ctx.start({ config: { REDIS_KEY_PREFIX: prefix, ...bucket.env }, extraRoutes: testRoutes });
    const { accountId, apiKey } = await api.account({ tier: 'developer', usd: '5' });
    const start = await api.services.billing.balance(accountId);
    const child = await startNode(
      join(process.cwd(), 'api/test/support/api-process.ts'),
      { DATABASE_URL: ctx.database.url, REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix, ...bucket.env },
      (line) => line.startsWith('listening '),
    );
    const url = child.line.slice('listening '.length);

    let receivedMicro = 0;
    let received = 0;
    let cut = 0;
    let killed = false;
    const client = async () => {
      while (!killed) {
        try {
          const res = await fetch(`${url}/test/lookup/x?rows=1`, { headers: { authorization: `Bearer ${apiKey}` } });
          await res.text();
          if (res.status !== 200) throw new Error(`status ${res.status}`);
          receivedMicro += Math.round(Number(res.headers.get('x-credit-cost')) * 1_000_000);
          received++;
        } catch (error) {
          // The process died under this request: it may or may not have been charged (index.ts rule 2).
          if (!killed) throw error;
          cut++;
        }
      }
    };
    const clients = Array.from({ length: 8 }, client);
    // Killed once its journal has flushed at least once, so the ledger holds charges of it to check.
    while (received < 200 || (await ledgerNet(accountId)) === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    while (received < 200 || (await ledgerNet(accountId)) === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    killed = true;
    await stopNode(child.child, 'SIGKILL');
    await Promise.all(clients);
    // Another pod's reconciler, once the dead pod's lease has expired.
    const reconciler = new Billing({
      ledger: api.services.ledger,
      leases: new LeaseBook(ctx.db, () => Date.now() + LEASE_TTL_MS + 1),
      wallet: new RedisWallet({ redis: ctx.redis, prefix }),
      deliveries: new MemoryDeliveryTracker(),
    });
    await reconciler.reconcile();

    const net = await ledgerNet(accountId);
    expect(await ctx.db('credit_leases').where({ account_id: accountId }).whereNull('settled_at')).toHaveLength(0);
    // Nothing beyond what responses reported is charged, except lookups the kill cut after their
    // charge (at most one per client). What the dead pod's journal held (its last flush interval's
    // charges, DECISIONS §3) is forgiven: the lease's settlement gave that credit back, so the
    // balance is exactly what was deposited less the ledger, and no credit was created.
    expect(net).toBeGreaterThan(0);
    expect(net - receivedMicro).toBeLessThanOrEqual(cut * 5_000);
    expect(await api.services.accounts.balance(accountId)).toBe(start - net);

    // The dead pod stored no file of its last seconds; the survivor's store (its 10 s loop's) does.
    await api.services.billing.storeUsage();
    const standing = (await readUsageLog(bucket.store, '')).filter((r) => r.account_id === accountId && !r.forgiven);
    const charges = (await ctx.db('ledger').where({ account_id: accountId, kind: 'charge' }).select('amount_micro', 'requests')) as { amount_micro: string; requests: number }[];
    expect({ micro: standing.reduce((total, r) => total + r.cost_micro, 0), records: standing.length }).toEqual({
      micro: charges.reduce((total, r) => total + Number(r.amount_micro), 0),
      records: charges.reduce((total, r) => total + r.requests, 0),
    });
    await api.close();
    await bucket.remove();
  }, 60_000);
});
