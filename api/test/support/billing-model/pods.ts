/**
 * The billing model's world: two API pods over one ledger and one Redis, and the readouts and
 * ledger sums its checks compare (`api/src/billing/billing.model.test.ts`).
 */
import { type TestContext, uniquePrefix } from '@uda/test-support/api-harness';
import type { TestBucket } from '@uda/test-support/s3';
import { AccountStore } from '../../../src/accounts/store.ts';
import { showAccount } from '../../../src/admin/app.ts';
import { ApiError } from '../../../src/errors/api-error.ts';
import { type ByteSpan, Billing, type Delivery, LeaseBook, Ledger, RedisDeliveryTracker, RedisWallet, UsageLog } from '../../../src/billing/index.ts';
import { TTL_MS } from './steps.ts';

export interface Pods {
  readonly pods: Billing[];
  /** A new pod over the same stores (when both died, the survivor that reconciles). */
  startPod(): Billing;
  /** The deliveries' and the leases' fake clocks, moved by the steps. */
  readonly clocks: { deliveries: number; leases: number };
  readonly prefix: string;
  /** Charge keys the billing named as forgiven (`onForgiven`), and those a dead pod's journal lost. */
  readonly forgiven: Set<string>;
  readonly usage: UsageLog[];
}

/**
 * Two pods over one ledger and one Redis; deliveries and leases each on their own fake clock. The
 * deliveries' clock starts at noon UTC, so a schedule's partial refunds all fall in one UTC day.
 */
export function twoPods(ctx: TestContext, bucket: TestBucket): Pods {
  const forgiven = new Set<string>();
  const clocks = { deliveries: Math.floor(Date.now() / 86_400_000) * 86_400_000 + 43_200_000, leases: Date.now() };
  const ledger = new Ledger(ctx.db, new AccountStore(ctx.db));
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
export async function abandoned(delivery: Delivery, lookups: Map<string, number>, sent?: ByteSpan, reportedRefunds?: Set<string>): Promise<number> {
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
export async function unreportedRefunds(ctx: TestContext, accountId: string, reported: Set<string>): Promise<number> {
  const rows = (await ctx.db('ledger').where({ account_id: accountId, kind: 'refund' }).where('idempotency_key', 'not like', 'refund:lookup:%').select('idempotency_key', 'amount_micro')) as { idempotency_key: string; amount_micro: string }[];
  return rows.filter((r) => !reported.has(r.idempotency_key.replace(/^refund:/, ''))).reduce((total, r) => total - Number(r.amount_micro), 0);
}

/**
 * Every readout of the balance (DECISIONS §3 "One balance"), from each live pod: `balance` (the
 * headers'), `readout` and admin's `showAccount` of it (admin and the dashboard), and the ledger's
 * sum: deposits less its charges and refunds less the lookups still in a journal.
 */
export async function readouts(ctx: TestContext, pods: Billing[], account: Parameters<typeof showAccount>[0], deposited: number, lostUnsettled = 0): Promise<number[]> {
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

/** Whether any of these leases is still open. */
export async function anyOpen(ctx: TestContext, leaseIds: Set<string>): Promise<boolean> {
  if (!leaseIds.size) return false;
  return (await ctx.db('credit_leases').whereIn('id', [...leaseIds]).whereNull('settled_at').first('id')) !== undefined;
}

export function refusedFor402(error: unknown): undefined {
  if (error instanceof ApiError && error.status === 402) return undefined;
  throw error;
}
