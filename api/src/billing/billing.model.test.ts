/**
 * Model-based test of the billing invariants (index.ts header) over real PostgreSQL and Redis.
 * fast-check draws schedules of: a window request on one of two API pods (a SQL result or an export
 * file, with or without bytes), a lookup charge (spent from the account's credit lease), a delivery
 * completing, a delivery breaking, a flush of pending lookups, a lease expiry (a reconciler settles
 * it), a top-up, and a pod crash (its deliveries are never ended and it never flushes or settles;
 * the other pod's reconciler refunds them once they expire and settles its leases). A broken
 * download of an export file has delivered a random byte range of it (rule 8: bytes delivered
 * count). Steps run in small concurrent batches, so requests really interleave in the ledger and in
 * Redis. After every batch, every readout of the balance (each live pod's `balance` and `readout`,
 * admin's `showAccount`, the ledger's sum with the pending log) says the same, and it is what was
 * deposited less what responses reported charged plus what breaks gave back. After each schedule,
 * every invariant is checked against the ledger.
 *
 * Lookups also come held (DECISIONS §3 "Holds"): the request's counter script (the real one, through
 * the Redis limiter backend) holds the largest cost, the lookup then charges its true rows or fails
 * and releases the hold; releases ride on a pod's next counter call or its flush. A pod that dies
 * with releases unsent leaves its holds to the reconciler, which releases them as charging nothing;
 * a settlement orphans holds it could not wait for. Such lookups are forgiven: the only charges
 * reported and never in the ledger, besides broken responses' refunds, and each is named by the
 * billing's `onForgiven` or was unsent on the dead pod.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { type TestContext, openTestContext, uniquePrefix } from '@uda/test-support/api-harness';
import { type TestBucket, createTestBucket } from '@uda/test-support/s3';
import { readUsageLog } from '../../test/support/usage-log.ts';
import { AccountStore } from '../accounts/store.ts';
import { showAccount } from '../admin/app.ts';
import { ApiError } from '../errors/api-error.ts';
import { type Delivery, Billing } from './billing.ts';
import { startBillingLoops } from './loops.ts';
import { type ByteSpan, PARTIAL_REFUNDS_PER_DAY, bytesToStand, coveredBytes } from './bytes-delivered.ts';
import { type WindowSpec, exportWindow, sqlWindow, windowBaseOf } from './charge-keys.ts';
import { MemoryDeliveryTracker } from './deliveries.ts';
import { RedisDeliveryTracker } from './deliveries-redis.ts';
import { LEASE_TTL_MS, LeaseBook } from './leases.ts';
import { Ledger } from './ledger.ts';
import { RedisWallet } from './wallet-redis.ts';
import { UsageLog } from './usage-log.ts';
import { RedisLimiterBackend } from '../limiter/redis.ts';

let ctx: TestContext;
let bucket: TestBucket;
beforeAll(async () => {
  ctx = await openTestContext();
  bucket = await createTestBucket('model');
});
afterAll(async () => {
  await bucket.remove();
  await ctx.close();
});

type Step =
  | { kind: 'window'; pod: number; window: number; bytes: boolean; made: boolean }
  | { kind: 'lookup'; pod: number }
  | { kind: 'held'; pod: number; rows: number; fail: boolean }
  | { kind: 'complete'; pick: number }
  | { kind: 'break'; pick: number; from: number; length: number }
  | { kind: 'range'; pod: number; file: number; from: number; length: number }
  | { kind: 'flush'; pod: number }
  | { kind: 'expire'; pod: number }
  | { kind: 'topup' }
  | { kind: 'crash'; pod: number }
  | { kind: 'stop'; pod: number }
  | { kind: 'redisLoss' };

/** The export files' size in the model. */
const FILE_BYTES = 1_000;

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('window' as const), pod: fc.nat(1), window: fc.nat(4), bytes: fc.boolean(), made: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('lookup' as const), pod: fc.nat(1) }) },
  // A lookup that holds HELD_ROWS rows' cost in its counter call, then charges `rows` of them or fails.
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('held' as const), pod: fc.nat(1), rows: fc.integer({ min: 1, max: 5 }), fail: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('flush' as const), pod: fc.nat(1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('expire' as const), pod: fc.nat(1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('topup' as const) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('complete' as const), pick: fc.nat() }) },
  // What a broken export download delivered: `length` bytes from `from` (0: it broke before its first byte).
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('break' as const), pick: fc.nat(), from: fc.nat(FILE_BYTES - 1), length: fc.oneof(fc.constant(0), fc.nat(FILE_BYTES / 2)) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('crash' as const), pod: fc.nat(1) }) },
  // A SIGTERM: the pod's responses are cut, it drains (writes its journal) and serves nothing more.
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('stop' as const), pod: fc.nat(1) }) },
  // Redis loses every key of this schedule (what FLUSHALL or a restart without persistence does to it).
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('redisLoss' as const) }) },
  // A range download of an export file that breaks having delivered `length` bytes from `from`.
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('range' as const), pod: fc.nat(1), file: fc.nat(2), from: fc.nat(FILE_BYTES - 1), length: fc.nat(FILE_BYTES / 2) }) },
);

const COST = 30_000;
const LOOKUP_COST = 5_000;
/** A held lookup's rows at most, and the price of one. */
const HELD_ROWS = 5;
const ROW_COST = 1_000;
const TOPUP = 40_000;
const TTL_MS = 60_000;

interface Open {
  readonly pod: number;
  readonly delivery: Delivery;
  /** A download of an export file that carries its bytes: a break says which it delivered. */
  readonly file: boolean;
}

/**
 * Two pods over one ledger and one Redis; deliveries and leases each on their own fake clock. The
 * deliveries' clock starts at noon UTC, so a schedule's partial refunds all fall in one UTC day.
 */
function twoPods(): { pods: Billing[]; startPod: () => Billing; clocks: { deliveries: number; leases: number }; prefix: string; forgiven: Set<string>; usage: UsageLog[] } {
  const forgiven = new Set<string>();
  const clocks = { deliveries: Math.floor(Date.now() / 86_400_000) * 86_400_000 + 43_200_000, leases: Date.now() };
  const accounts = new AccountStore(ctx.db);
  const ledger = new Ledger(ctx.db, accounts);
  const leases = new LeaseBook(ctx.db, () => clocks.leases);
  const prefix = uniquePrefix();
  const usage: UsageLog[] = [];
  const startPod = () =>
    new Billing({
      usage: usage[usage.push(new UsageLog({ store: bucket.store, db: ctx.db, retentionDays: 35, pod: `${prefix}p${usage.length}` })) - 1],
      ledger,
      leases,
      wallet: new RedisWallet({ redis: ctx.redis, prefix }),
      deliveries: new RedisDeliveryTracker({ redis: ctx.redis, prefix }),
      deliveryTtlMs: TTL_MS,
      now: () => clocks.deliveries,
      holdWaitMs: 50,
      onForgiven: (key) => forgiven.add(key),
    });
  return { pods: [startPod(), startPod()], startPod, clocks, prefix, forgiven, usage };
}

/** What abandoning a delivery gave back, from the balances it reports before and after. */
async function abandoned(delivery: Delivery, lookups: Map<string, number>, sent?: ByteSpan, reportedRefunds?: Set<string>): Promise<number> {
  if (sent) delivery.sent(sent);
  const after = await delivery.abandon();
  const back = after.balanceMicro - delivery.settlement.balanceMicro;
  if (delivery.chargeKey.startsWith('lookup:') && delivery.settlement.chargedMicro) lookups.set(delivery.chargeKey, back);
  if (back > 0) reportedRefunds?.add(delivery.chargeKey);
  return back;
}

/**
 * Window refunds no response reported: a delivery whose charge failed (a 402 while another
 * delivery's lease take emptied the buckets) found the key spent and every other delivery ended,
 * and its probe refunded the charge (`WindowCharges.#release`). They are in the ledger.
 */
async function unreportedRefunds(accountId: string, reported: Set<string>): Promise<number> {
  const rows = (await ctx.db('ledger').where({ account_id: accountId, kind: 'refund' }).where('idempotency_key', 'not like', 'refund:lookup:%').select('idempotency_key', 'amount_micro')) as { idempotency_key: string; amount_micro: string }[];
  return rows.filter((r) => !reported.has(r.idempotency_key.replace(/^refund:/, ''))).reduce((total, r) => total - Number(r.amount_micro), 0);
}

/**
 * Every readout of the balance (DECISIONS §3 "One balance"), from each live pod: `balance` (the
 * headers'), `readout` and admin's `showAccount` of it (admin and the dashboard), and the ledger's
 * sum: deposits less its charges and refunds less the lookups still in the pending log.
 */
async function readouts(pods: Billing[], account: Parameters<typeof showAccount>[0], deposited: number, lostUnsettled = 0): Promise<number[]> {
  const values: number[] = [];
  for (const pod of pods) {
    const readout = await pod.readout(account.id);
    values.push(await pod.balance(account.id), readout.balanceMicro, readout.grantMicro + readout.topoffMicro, Math.round(showAccount(account, readout).balance_usd * 1_000_000));
  }
  const spent = await ctx.db('ledger').where({ account_id: account.id }).whereIn('kind', ['charge', 'refund']).sum<{ s: string | null }[]>({ s: 'amount_micro' });
  // Charges still in a live pod's journal; and those a dead pod's journal lost while their lease is
  // open (its wallet spent them; its settlement gives them back).
  const pending = pods.flatMap((pod) => pod.unacked()).filter((e) => e.accountId === account.id).reduce((total, e) => total + e.amountMicro, 0);
  values.push(deposited - Number(spent[0]?.s ?? 0) - pending - lostUnsettled);
  return values;
}

/** One schedule: two pods over one ledger and one Redis. */
async function runSchedule(batches: Step[][], startBalance: number): Promise<void> {
  const t0 = Date.now();
  if (process.env.DEBUG_MODEL) process.stderr.write(`schedule ${JSON.stringify(batches)} ${startBalance}\n`);
  try {
    await runScheduleNow(batches, startBalance);
  } finally {
    if (process.env.DEBUG_MODEL) process.stderr.write(`  took ${Date.now() - t0} ms\n`);
  }
}

async function runScheduleNow(batches: Step[][], startBalance: number): Promise<void> {
  const { pods, startPod, clocks, prefix, forgiven, usage } = twoPods();
  const limiter = new RedisLimiterBackend({ client: ctx.redis, prefix });
  const accounts = new AccountStore(ctx.db);
  const account = await accounts.create({ email: 'model@example.com', tier: 'developer' });
  await accounts.setGrant(account.id, startBalance);
  let deposited = startBalance;
  let refundedToCaller = 0;
  /** Charged lookups whose response broke → what the break gave back (from the log, the queue or the ledger). */
  const brokenLookups = new Map<string, number>();
  /** Charge keys whose refund a broken response reported. */
  const reportedRefunds = new Set<string>();
  /** Every charge's key (a lookup's, a window's) → what its response reported. */
  const lookupCharges = new Map<string, number>();
  /** Lookups whose hold this schedule made: a dead pod's hold keeps its charge in the balance until reaped. */
  const heldKeys = new Set<string>();
  /** Charges a dead pod's journal lost (SIGKILL: forgiven), with the lease they were spent under. */
  const lost = new Map<string, { leaseId: string; amountMicro: number }>();
  const loseJournal = (pod: Billing) => {
    const unsent = new Set(pod.unsentReleases());
    for (const entry of pod.unacked()) {
      if (entry.accountId !== account.id) continue;
      // Its hold was never released: the hold, not a spend, is in the balance.
      if (unsent.has(entry.key)) heldKeys.add(entry.key);
      else heldKeys.delete(entry.key);
      lost.set(entry.key, { leaseId: entry.leaseId, amountMicro: entry.amountMicro });
      forgiven.add(entry.key);
    }
  };
  /** A lost charge spent straight from the wallet stays spent in the balance until its lease settles. */
  const lostUnsettled = async () => {
    let total = 0;
    for (const [key, { leaseId, amountMicro }] of lost) {
      if (heldKeys.has(key) || brokenLookups.has(key)) continue;
      const lease = await ctx.db('credit_leases').where({ id: leaseId }).first('settled_at');
      if (!lease?.settled_at) total += amountMicro;
    }
    return total;
  };
  /** A window key reported twice (two pods spent it after Redis forgot it) adds up. */
  const reportCharge = (delivery: Delivery) => {
    if (delivery.settlement.chargedMicro) lookupCharges.set(delivery.chargeKey, (lookupCharges.get(delivery.chargeKey) ?? 0) + delivery.settlement.chargedMicro);
  };
  /** Leases open when Redis lost its keys: until they settle, the balance reads low by the credit their wallet held. */
  const lostWallets = new Set<string>();
  /** Charges whose deliveries were in flight when Redis lost the tracker's state: rule 2 cannot hold for them. */
  const trackerLost = new Set<string>();
  /** Redis lost this schedule's keys: the delivered bytes and the day's partial refunds started over (deploy.md). */
  let redisLost = false;
  /** Charges forgiven: `forgiven` (the billing's word, and a dead pod's journal), less what a break gave back. */
  const forgivenMicro = () => [...forgiven].reduce((total, key) => total + (lookupCharges.get(key) ?? 0) - (brokenLookups.get(key) ?? 0), 0);
  const payer = { accountId: account.id, tier: account.tier };
  const windows: WindowSpec[] = [
    sqlWindow(account.id, 'q1', 't1'),
    sqlWindow(account.id, 'q2', 't1'),
    ...['service.db', 'tables/gutenberg.csv', 'tables/census_states.parquet'].map((file) => exportWindow(account.id, `exports/v1/${file}`, 86_400_000)),
  ];
  /** Export charge key → the byte spans its broken downloads delivered. */
  const brokenSpans = new Map<string, ByteSpan[]>();

  let reported = 0;
  const open: Open[] = [];
  /** Pods that serve nothing more: killed (SIGKILL) or stopped (SIGTERM, drained). */
  const crashed = new Set<number>();
  const killed = new Set<number>();
  const completedKeys = new Set<string>();
  /**
   * Charges a delivery completed since Redis last lost its keys. A completion before a loss is
   * forgotten with the tracker's state, so a delivery breaking afterwards may refund its charge
   * (DECISIONS §3: the client's side of the doubt; it costs us the charge, never the client).
   */
  let completedSinceLoss = new Set<string>();
  /** A lookup whose pod died before its response: its charge stands (index.ts, rule 2). */
  const diedWithPod = new Set<string>();

  /** A dead pod's responses are never ended (a request running when it died may have added one after the crash step). */
  const dropDead = (pod: number) => {
    for (let i = open.length - 1; i >= 0; i--) {
      if (open[i]!.pod !== pod) continue;
      const [dead] = open.splice(i, 1);
      if (dead!.delivery.chargeKey.startsWith('lookup:')) diedWithPod.add(dead!.delivery.chargeKey);
    }
  };
  const take = (pick: number): Open | undefined => (open.length ? open.splice(pick % open.length, 1)[0] : undefined);
  const run = async (s: Step): Promise<void> => {
    switch (s.kind) {
      case 'window': {
        if (crashed.has(s.pod)) return;
        const isFile = s.window >= 2;
        const options = { costMicro: COST, carriesBytes: s.bytes, madeResult: s.made, sizeBytes: isFile ? FILE_BYTES : undefined };
        const delivery = await pods[s.pod]!.deliverWindow(payer, windows[s.window]!, options).catch(refusedFor402);
        if (!delivery) return;
        reported += delivery.settlement.chargedMicro;
        reportCharge(delivery);
        open.push({ pod: s.pod, delivery, file: isFile && s.bytes && delivery.holdsCharge });
        return;
      }
      case 'lookup': {
        if (crashed.has(s.pod)) return;
        const delivery = await pods[s.pod]!.deliverOnce(payer, { costMicro: LOOKUP_COST }).catch(refusedFor402);
        if (!delivery) return;
        reported += delivery.settlement.chargedMicro;
        lookupCharges.set(delivery.chargeKey, delivery.settlement.chargedMicro);
        open.push({ pod: s.pod, delivery, file: false });
        return;
      }
      case 'held': {
        if (crashed.has(s.pod)) return;
        const pod = pods[s.pod]!;
        // The request's counter call: no counter here, only the rider (the hold and this pod's queued releases).
        const plan = pod.planHold(payer, HELD_ROWS * ROW_COST);
        const { reply } = plan.rider ? await limiter.takeWith([], plan.rider) : { reply: undefined };
        const hold = await plan.made(reply);
        if (s.fail) {
          if (hold) await pod.releaseHold(hold);
          return;
        }
        // No hold (a short or closed wallet): the lookup charges the usual way, as the route does.
        const delivery = await pod.deliverOnce(payer, { costMicro: s.rows * ROW_COST }, hold).catch(refusedFor402);
        if (!delivery) return;
        if (hold) heldKeys.add(delivery.chargeKey);
        reported += delivery.settlement.chargedMicro;
        lookupCharges.set(delivery.chargeKey, delivery.settlement.chargedMicro);
        open.push({ pod: s.pod, delivery, file: false });
        return;
      }
      case 'complete': {
        const item = take(s.pick);
        if (!item) return;
        if (item.delivery.holdsCharge) {
          completedKeys.add(item.delivery.chargeKey);
          completedSinceLoss.add(item.delivery.chargeKey);
        }
        await item.delivery.complete();
        return;
      }
      case 'break': {
        const item = take(s.pick);
        if (!item) return;
        const span = item.file && s.length > 0 ? { start: s.from, end: Math.min(FILE_BYTES, s.from + s.length) } : undefined;
        if (span) brokenSpans.set(item.delivery.chargeKey, [...(brokenSpans.get(item.delivery.chargeKey) ?? []), span]);
        // Read after the await: steps of a batch run concurrently.
        const back = await abandoned(item.delivery, brokenLookups, span, reportedRefunds);
        refundedToCaller += back;
        return;
      }
      case 'range': {
        if (crashed.has(s.pod)) return;
        const options = { costMicro: COST, carriesBytes: true, sizeBytes: FILE_BYTES };
        const delivery = await pods[s.pod]!.deliverWindow(payer, windows[2 + s.file]!, options).catch(refusedFor402);
        if (!delivery) return;
        reported += delivery.settlement.chargedMicro;
        reportCharge(delivery);
        const span = s.length > 0 ? { start: s.from, end: Math.min(FILE_BYTES, s.from + s.length) } : undefined;
        if (span) brokenSpans.set(delivery.chargeKey, [...(brokenSpans.get(delivery.chargeKey) ?? []), span]);
        // Read after the await: steps of a batch run concurrently.
        const back = await abandoned(delivery, brokenLookups, span, reportedRefunds);
        refundedToCaller += back;
        return;
      }
      case 'flush': {
        if (!crashed.has(s.pod)) await pods[s.pod]!.flush();
        return;
      }
      case 'expire': {
        clocks.leases += LEASE_TTL_MS + 1;
        if (!crashed.has(s.pod)) await pods[s.pod]!.reconcile();
        return;
      }
      case 'topup': {
        deposited += TOPUP;
        await accounts.addTopoff(account.id, TOPUP);
        return;
      }
      case 'stop': {
        if (crashed.has(s.pod)) return;
        // The server closed its connections: each open response on the pod breaks; then the drain.
        crashed.add(s.pod);
        for (let i = open.length - 1; i >= 0; i--) {
          if (open[i]!.pod !== s.pod) continue;
          const [cut] = open.splice(i, 1);
          refundedToCaller += await abandoned(cut!.delivery, brokenLookups, undefined, reportedRefunds);
        }
        await pods[s.pod]!.drain(0);
        return;
      }
      case 'redisLoss': {
        for (const lease of (await ctx.db('credit_leases').where({ account_id: account.id }).whereNull('settled_at').select('id')) as { id: string }[]) lostWallets.add(lease.id);
        for (const item of open) trackerLost.add(item.delivery.chargeKey);
        redisLost = true;
        completedSinceLoss = new Set();
        const keys = await ctx.redis.keys(`${prefix}*`);
        if (keys.length) await ctx.redis.del(...keys);
        return;
      }
      case 'crash': {
        // The pod dies: its deliveries are never ended, its hold releases never sent, and it serves nothing more.
        crashed.add(s.pod);
        killed.add(s.pod);
        loseJournal(pods[s.pod]!);
        dropDead(s.pod);
        return;
      }
    }
  };

  const sendReleases = () => Promise.all(pods.filter((_, i) => !crashed.has(i)).map((pod) => pod.sendReleases()));
  for (const batch of batches) {
    // A SIGTERM stops new requests and lets those in flight finish before its drain: it runs after the batch's other steps.
    await Promise.all(batch.filter((x) => x.kind !== 'stop').map(run));
    for (const stop of batch.filter((x) => x.kind === 'stop')) await run(stop);
    // A request that was running on a pod when it died may have reported its charge after the crash step looked.
    for (const dead of killed) {
      loseJournal(pods[dead]!);
      dropDead(dead);
    }
    // An early lease extension runs past its lookup's response: a readout in the middle of its
    // move of credit (buckets first, wallet next) would see it half made.
    await Promise.all(pods.map((pod) => pod.writesDone()));
    // A live pod's hold releases and journal leave within a flush interval; a readout counts a hold as
    // unspent until then, and a charge that arrives after its lease settled moves the buckets then.
    const live = pods.filter((_, i) => !crashed.has(i));
    await Promise.all(live.map((pod) => pod.flush()));
    // One balance: after every batch, every readout on every live pod, and the ledger, agree.
    const unsettled = await lostUnsettled();
    const expected = deposited - (reported - refundedToCaller - forgivenMicro() - (await unreportedRefunds(account.id, reportedRefunds))) - unsettled;
    const values = await readouts(live, account, deposited, unsettled);
    if (await anyOpen(lostWallets)) {
      // A wallet Redis lost: every pod says the same, never more than deposits less the ledger (no
      // credit is created). Read from PostgreSQL, the lost wallet's lease no longer holds back what a
      // dead pod's journal lost (`unsettled`): its settlement gives that back, and the readout says so early.
      expect(values.slice(0, -1)).toEqual(Array(4 * live.length).fill(values[0]));
      expect(values[0]).toBeLessThanOrEqual(expected + unsettled);
      expect(values.at(-1)).toBe(expected);
    } else {
      expect(values).toEqual(Array(4 * live.length + 1).fill(expected));
    }
  }
  // Mid-schedule, before the end: the buckets plus the open lease's unspent credit are what was
  // deposited less what was spent, and nothing is negative.
  // Both pods may have died: a pod started afterwards (with nothing queued) is then the one that flushes and reconciles.
  const survivor = !crashed.has(0) ? 0 : !crashed.has(1) ? 1 : pods.push(startPod()) - 1;
  await pods[survivor]!.flush();
  if (!(await anyOpen(lostWallets))) expect(await pods[survivor]!.balance(account.id)).toBe(deposited - (reported - refundedToCaller - forgivenMicro() - (await unreportedRefunds(account.id, reportedRefunds))) - (await lostUnsettled()));
  // The end of the world: every surviving delivery ends (breaking), then dead pods' entries and
  // every lease expire, and a surviving pod's reconciler refunds and settles them.
  for (const item of open.splice(0)) {
    const back = await abandoned(item.delivery, brokenLookups, undefined, reportedRefunds);
    refundedToCaller += back;
  }
  await sendReleases();
  clocks.deliveries += TTL_MS + 1;
  clocks.leases += LEASE_TTL_MS + 1;
  await pods[survivor]!.reconcile();
  // A dead pod never drains: its journal died with it.
  for (const [i, pod] of pods.entries()) if (!crashed.has(i)) await pod.drain(0);

  for (const log of usage) await log.store();
  const rows = (await ctx.db('ledger').where({ account_id: account.id }).select('kind', 'amount_micro', 'grant_micro', 'topoff_micro', 'idempotency_key', 'requests')) as {
    kind: string;
    amount_micro: string;
    grant_micro: string;
    topoff_micro: string;
    idempotency_key: string;
    requests: number;
  }[];
  const sum = (list: typeof rows, field: 'amount_micro' | 'grant_micro' | 'topoff_micro' = 'amount_micro') => list.reduce((total, r) => total + Number(r[field]), 0);
  const charges = rows.filter((r) => r.kind === 'charge');
  const refunds = rows.filter((r) => r.kind === 'refund');
  const balance = await accounts.balance(account.id);

  // 3: never below zero; the buckets moved by exactly the ledger's parts; every lease is settled.
  expect(balance).toBeGreaterThanOrEqual(0);
  expect(balance).toBe(deposited - sum(rows, 'grant_micro') - sum(rows, 'topoff_micro'));
  // The two halves of "what callers were told is what the ledger holds" (DECISIONS §3):
  // (a) reported costs equal the usage log per key. A reported charge missing from the log was
  // taken back before it was written (its response broke) or died with its pod's journal.
  const log = (await readUsageLog(bucket.store, prefix)).filter((r) => r.account_id === account.id);
  const logged = new Map<string, { cost_micro: number; forgiven: boolean }>();
  for (const r of log) logged.set(r.charge_key, { cost_micro: (logged.get(r.charge_key)?.cost_micro ?? 0) + r.cost_micro, forgiven: r.forgiven });
  for (const [key, micro] of lookupCharges) {
    const record = logged.get(key);
    if (record) expect({ key, cost: record.cost_micro }).toEqual({ key, cost: micro });
    else expect({ key, refundedOrLost: brokenLookups.has(key) || reportedRefunds.has(key) || lost.has(key) }).toEqual({ key, refundedOrLost: true });
  }
  for (const [key, record] of logged) expect(lookupCharges.get(key)).toBe(record.cost_micro);
  // (b) the usage log equals the ledger per account: its records not forgiven are the ledger's
  // charge rows, in amount and in requests (a flush's lookups are one row).
  const standing = log.filter((r) => !r.forgiven);
  expect(sum(charges)).toBe(standing.reduce((total, r) => total + r.cost_micro, 0));
  expect(charges.reduce((total, r) => total + r.requests, 0)).toBe(standing.length);
  // A forgiven charge is never in the ledger as well.
  for (const key of forgiven) expect(logged.get(key)?.forgiven ?? true).toBe(true);
  expect(reported - refundedToCaller - forgivenMicro() - (await unreportedRefunds(account.id, reportedRefunds))).toBe(sum(charges) + sum(refunds));
  expect(balance).toBe(deposited - (sum(charges) + sum(refunds)));
  expect(await ctx.db('credit_leases').where({ account_id: account.id }).whereNull('settled_at').count<{ n: string }[]>({ n: '*' })).toEqual([{ n: '0' }]);
  // 2: a charge with a completed delivery is never refunded, unless Redis forgot that completion or
  // a delivery in flight at the loss (it may complete after a later break refunded the charge) ...
  for (const refund of refunds) {
    const key = refund.idempotency_key.replace(/^refund:/, '');
    expect({ key, completed: completedSinceLoss.has(key) && !trackerLost.has(key) }).toEqual({ key, completed: false });
  }
  // ... and once every delivery has ended, a window charge none of them completed is refunded.
  // A charge none of them completed stands only as rule 8 says: its file's broken downloads
  // delivered half of it, or bytes went out under it and the day's partial refunds were spent.
  const refunded = new Set(refunds.map((r) => r.idempotency_key.replace(/^refund:/, '').split('~')[0]!));
  const partialRefunds = [...refunded].filter((key) => brokenSpans.has(key)).length;
  for (const charge of charges) {
    // A window key reported twice has a second row, `<key>~<pod>` (journal.ts).
    const key = charge.idempotency_key.split('~')[0]!;
    if (trackerLost.has(key) || redisLost) continue;
    // A flush's lookups (one row) and a lookup charged on the buckets: rule 2 for lookups is the log's check above.
    if (key.startsWith('lookups:') || key.startsWith('lookup:')) continue;
    if (diedWithPod.has(key) || completedKeys.has(key) || refunded.has(key)) continue;
    const fileSpans = [...brokenSpans].filter(([other]) => windowBaseOf(other) === windowBaseOf(key)).flatMap(([, spans]) => spans);
    const onBytes = coveredBytes(fileSpans) >= bytesToStand(FILE_BYTES);
    const pastCap = brokenSpans.has(key) && partialRefunds === PARTIAL_REFUNDS_PER_DAY;
    expect({ key, stands: onBytes || pastCap }).toEqual({ key, stands: true });
  }
  // 8: refunds never add up to a file: what broken downloads delivered under a file's refunded
  // charges stays under half of it; and partial refunds stay within the day's cap (unless Redis,
  // which counts them, lost its data: the count starts over).
  if (!redisLost) {
    for (const window of windows) {
      const spans = [...brokenSpans].filter(([key]) => windowBaseOf(key) === window.base && refunded.has(key)).flatMap(([, list]) => list);
      expect(coveredBytes(spans)).toBeLessThan(bytesToStand(FILE_BYTES));
    }
    expect(partialRefunds).toBeLessThanOrEqual(PARTIAL_REFUNDS_PER_DAY);
  }
  // 1: every key is the server's and names the account.
  for (const row of rows) expect(row.idempotency_key).toContain(account.id);
}

/** Whether any of these leases is still open. */
async function anyOpen(leaseIds: Set<string>): Promise<boolean> {
  if (!leaseIds.size) return false;
  return (await ctx.db('credit_leases').whereIn('id', [...leaseIds]).whereNull('settled_at').first('id')) !== undefined;
}

function refusedFor402(error: unknown): undefined {
  if (error instanceof ApiError && error.status === 402) return undefined;
  throw error;
}

describe('billing invariants under random interleavings (real PostgreSQL and Redis)', () => {
  it('hold for every schedule of requests, completions, breaks and pod crashes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(step, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 25 }), fc.constantFrom(0, COST, 2 * COST + 5_000, 1_000_000), runSchedule),
      {
        numRuns: Number(process.env.MODEL_RUNS ?? 60),
        endOnFailure: process.env.MODEL_NO_SHRINK === '1',
        // A failure prints its seed and path: MODEL_SEED and MODEL_PATH replay it.
        ...(process.env.MODEL_SEED ? { seed: Number(process.env.MODEL_SEED), path: process.env.MODEL_PATH } : {}),
      },
    );
  }, 240_000);

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
    const before = await readouts(pods, account, deposited);
    expect(before).toEqual(Array(before.length).fill(deposited - 3 * LOOKUP_COST));
    // Each pod runs its own loops (its journal's flush); pod 1's reconciler settles the lease.
    const loops = pods.map((pod) => startBillingLoops(pod, 100));
    try {
      for (let i = 0; i < 2_400 && (await openLeases()) > 0; i++) await new Promise((r) => setTimeout(r, 25));
      expect(await openLeases()).toBe(0);
      expect(await readouts(pods, account, deposited)).toEqual(before);
      // Settled: the buckets alone are the balance now.
      expect(await accounts.balance(account.id)).toBe(before[0]);
    } finally {
      for (const loop of loops) loop.stop();
      for (const pod of pods) await pod.drain(0);
    }
  }, 120_000);

  it('a pod that dies with a hold\'s release and its charge unsent: the reconciler releases the hold, the charge is forgiven, and the readouts agree', async () => {
    const { pods, clocks } = twoPods();
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

  it('the observed refund race: a paused download breaks after a free re-read completed, and the charge stands', async () => {
    await runSchedule(
      [[{ kind: 'window', pod: 0, window: 2, bytes: true, made: false }], [{ kind: 'window', pod: 1, window: 2, bytes: true, made: false }], [{ kind: 'complete', pick: 1 }], [{ kind: 'break', pick: 0, from: 0, length: 0 }]],
      1_000_000,
    );
    // The window's charge (spent from the lease, written by a flush) was never refunded.
    const last = (await ctx.db('ledger').where('idempotency_key', 'like', 'export:%').orderBy('id', 'desc').first('account_id')) as { account_id: string };
    const rows = ctx.db('ledger').where({ account_id: last.account_id }).where('idempotency_key', 'like', '%export:%');
    expect(((await rows.select('kind')) as { kind: string }[]).map((r) => r.kind)).toEqual(['charge']);
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
