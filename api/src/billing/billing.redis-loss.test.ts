/**
 * An observed defect: Redis flushed mid-load (a Redis pod without persistence rescheduled)
 * left the ledger lower than what clients were told in `X-Credit-Cost`. Redis is a cache of
 * PostgreSQL (DECISIONS §3 "Money survives any single fault"): every charge a response reported
 * reaches the ledger however Redis is lost, and no credit is handed out twice.
 *
 * The test starts a Redis of its own (never the shared one), charges lookups (held and spent),
 * a SQL window and an export window on two pods, sends FLUSHALL to that Redis midway, charges more,
 * then flushes and settles: the ledger's charges equal what the responses reported.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { type TestContext, openTestContext, uniquePrefix } from '@uda/test-support/api-harness';
import { freePort } from '../../test/support/spawn.ts';
import { AccountStore } from '../accounts/store.ts';
import { RedisLimiterBackend } from '../limiter/redis.ts';
import { Billing } from './billing.ts';
import { exportWindow, sqlWindow } from './charge-keys.ts';
import { RedisDeliveryTracker } from './deliveries-redis.ts';
import { UsageLog } from './usage-log.ts';
import { LEASE_TTL_MS, LeaseBook } from './leases.ts';
import { Ledger } from './ledger.ts';
import { RedisWallet } from './wallet-redis.ts';

let ctx: TestContext;
let server: ChildProcess;
let redis: Redis;

beforeAll(async () => {
  ctx = await openTestContext();
  const port = await freePort();
  server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  redis = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
  for (let i = 0; i < 200 && (await redis.ping().catch(() => '')) !== 'PONG'; i++) await new Promise((r) => setTimeout(r, 25));
}, 60_000);

afterAll(async () => {
  redis.disconnect();
  if (server.exitCode === null) server.kill('SIGKILL');
  await ctx.close();
});

const ROW_MICRO = 1_000;
const HELD_ROWS = 5;

describe('a Redis flushed mid-traffic', () => {
  it('loses no charge a response reported, and hands out no credit twice', async () => {
    const clock = { leases: Date.now() };
    const accounts = new AccountStore(ctx.db);
    const ledger = new Ledger(ctx.db, accounts);
    const leases = new LeaseBook(ctx.db, () => clock.leases);
    const prefix = uniquePrefix();
    const forgiven = new Set<string>();
    const pod = () => new Billing({ ledger, leases, wallet: new RedisWallet({ redis, prefix }), deliveries: new RedisDeliveryTracker({ redis, prefix }), holdWaitMs: 50, onForgiven: (key) => forgiven.add(key) });
    const pods = [pod(), pod()];
    const limiter = new RedisLimiterBackend({ client: redis, prefix });
    const account = await accounts.create({ email: 'flushed@example.com', tier: 'developer' });
    const deposited = 5_000_000;
    await accounts.setGrant(account.id, deposited);
    const payer = { accountId: account.id, tier: account.tier };
    let reported = 0;

    const traffic = async (round: number) => {
      for (const [i, billing] of pods.entries()) {
        // A held lookup (its counter call holds the largest cost), a lookup spent directly, a SQL window, an export file.
        const plan = billing.planHold(payer, HELD_ROWS * ROW_MICRO);
        const hold = await plan.made(plan.rider ? (await limiter.takeWith([], plan.rider)).reply : undefined);
        const held = await billing.deliverOnce(payer, { costMicro: 3 * ROW_MICRO }, hold);
        const spent = await billing.deliverOnce(payer, { costMicro: 2 * ROW_MICRO });
        const sql = await billing.deliverWindow(payer, sqlWindow(account.id, `q${round}-${i}`, 't1'), { costMicro: 25_000, carriesBytes: true });
        const file = await billing.deliverWindow(payer, exportWindow(account.id, `exports/v1/f${round}-${i}.csv`, 86_400_000), { costMicro: 100_000, carriesBytes: true, sizeBytes: 10 });
        for (const delivery of [held, spent, sql, file]) {
          reported += delivery.settlement.chargedMicro;
          await delivery.complete();
        }
      }
    };

    await traffic(0);
    await pods[0]!.sendReleases();
    // Redis loses everything: wallets, holds, pending records, remembered window keys.
    await redis.flushall();
    await traffic(1);
    for (const billing of pods) await billing.flush();
    clock.leases += LEASE_TTL_MS + 1;
    await pods[1]!.reconcile();
    for (const billing of pods) await billing.drain(0);

    const sum = async (kinds: string[]) =>
      Number((await ctx.db('ledger').where({ account_id: account.id }).whereIn('kind', kinds).sum<{ s: string | null }[]>({ s: 'amount_micro' }))[0]?.s ?? 0);
    expect(forgiven).toEqual(new Set());
    expect(await sum(['charge', 'refund'])).toBe(reported);
    // Every lease settled: the buckets alone are the balance, and no credit was created.
    expect(await accounts.balance(account.id)).toBe(deposited - reported);
    expect(await pods[0]!.balance(account.id)).toBe(deposited - reported);
  }, 60_000);

  it('reports deposits − ledger right after the loss, in every readout and in the next held and spent lookups (the lost wallet’s credit from PostgreSQL)', async () => {
    const accounts = new AccountStore(ctx.db);
    const leases = new LeaseBook(ctx.db);
    const prefix = uniquePrefix();
    const pod = () => new Billing({ ledger: new Ledger(ctx.db, accounts), leases, wallet: new RedisWallet({ redis, prefix }), deliveries: new RedisDeliveryTracker({ redis, prefix }), holdWaitMs: 50 });
    const pods = [pod(), pod()];
    const limiter = new RedisLimiterBackend({ client: redis, prefix });
    const account = await accounts.create({ email: 'readouts@example.com', tier: 'developer' });
    const deposited = 5_000_000;
    await accounts.setGrant(account.id, deposited);
    const payer = { accountId: account.id, tier: account.tier };
    const depositsLessLedger = async () => {
      for (const billing of pods) await billing.flush();
      return deposited - Number((await ctx.db('ledger').where({ account_id: account.id }).whereIn('kind', ['charge', 'refund']).sum<{ s: string | null }[]>({ s: 'amount_micro' }))[0]?.s ?? 0);
    };
    const heldLookup = async (billing: Billing) => {
      const plan = billing.planHold(payer, HELD_ROWS * ROW_MICRO);
      const hold = await plan.made(plan.rider ? (await limiter.takeWith([], plan.rider)).reply : undefined);
      return (await billing.deliverOnce(payer, { costMicro: 3 * ROW_MICRO }, hold)).settlement;
    };
    for (const billing of pods) await heldLookup(billing);
    await pods[1]!.deliverOnce(payer, { costMicro: 2 * ROW_MICRO });
    await pods[0]!.sendReleases();
    // The journals are written: what the lease's wallet held is exactly known before it is lost.
    const before = await depositsLessLedger();

    await redis.flushall();
    for (const billing of pods) expect(await billing.balance(account.id)).toBe(before);
    expect((await pods[0]!.readout(account.id)).balanceMicro).toBe(before);

    // The next lookups fund a wallet anew from a later part of the same lease: it holds only that part.
    const spent = (await pods[0]!.deliverOnce(payer, { costMicro: 2 * ROW_MICRO })).settlement;
    // A pod's readouts count its own charges not written yet; another pod's once its flush wrote them.
    await pods[0]!.flush();
    const held = await heldLookup(pods[1]!);
    await pods[1]!.sendReleases();
    expect([spent.chargedMicro, held.chargedMicro]).toEqual([2 * ROW_MICRO, 3 * ROW_MICRO]);
    const after = await depositsLessLedger();
    expect(after).toBe(before - 5 * ROW_MICRO);
    expect(spent.balanceMicro).toBe(before - 2 * ROW_MICRO);
    expect(held.balanceMicro).toBe(after);
    for (const billing of pods) expect(await billing.balance(account.id)).toBe(after);
    const readout = await pods[1]!.readout(account.id);
    expect([readout.balanceMicro, readout.grantMicro + readout.topoffMicro]).toEqual([after, after]);
  });

  // Found by the load run with `redis-restart`: SQL window charges spent while Redis was away went
  // to the ledger directly and had no usage record, so the usage log was lower than the ledger.
  it('gives a charge written to the ledger directly (Redis unreachable) its usage record', async () => {
    const accounts = new AccountStore(ctx.db);
    const ledger = new Ledger(ctx.db, accounts);
    const unreachable = new Redis({ port: await freePort(), host: '127.0.0.1', maxRetriesPerRequest: 0, enableOfflineQueue: false, lazyConnect: true });
    const prefix = uniquePrefix();
    const usage = new UsageLog({ store: { description: 'unused' } as never, db: ctx.db, retentionDays: 35 });
    const billing = new Billing({ ledger, leases: new LeaseBook(ctx.db), wallet: new RedisWallet({ redis: unreachable, prefix }), deliveries: new RedisDeliveryTracker({ redis: unreachable, prefix }), usage });
    const account = await accounts.create({ email: 'unreachable@example.com', tier: 'developer' });
    await accounts.setGrant(account.id, 5_000_000);

    const delivery = await billing.deliverOnce({ accountId: account.id, tier: account.tier }, { costMicro: 2 * ROW_MICRO });

    expect(delivery.settlement.chargedMicro).toBe(2 * ROW_MICRO);
    // The next flush writes its record to the usage log's outbox in PostgreSQL.
    await billing.flush();
    const outbox = (await ctx.db('usage_outbox').select('records')) as { records: { account_id: string; cost_micro: number }[] }[];
    expect(outbox.flatMap((row) => row.records).filter((r) => r.account_id === account.id)).toEqual([expect.objectContaining({ cost_micro: 2 * ROW_MICRO })]);
    unreachable.disconnect();
  });
});
