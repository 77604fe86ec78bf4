/**
 * The billing core: one place for "when is something charged, and when is it refunded"
 * (SPEC "Credits and metering"; DECISIONS §3). Free of Express and MCP: handlers and tools pass a
 * plain payer and get a plain settlement back; `http.ts` is the one adapter that sets headers.
 *
 * `Billing` is a thin facade over the parts, one job each: the credit owner (`credit/`: the balance,
 * holds, leases and the wallet's spends), this pod's journal (`journal.ts`), window charges and their
 * deliveries (`window-charges.ts`), refunds and the reconciler (`refunds.ts`), writes kept past
 * their response (`pending-writes.ts`). Each part is given the others it calls as objects. Its timers (reconciler, flush) are started and stopped by
 * the composition root (`loops.ts`, `services.ts`).
 *
 * The invariants every charge keeps are stated once, in the door (`index.ts`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@uda/shared/logger';
import type { Metrics } from '../metrics.ts';
import { type WindowSpec, lookupChargeKey } from './charge-keys.ts';
import { Credit } from './credit/index.ts';
import type { DeliveryTracker } from './deliveries.ts';
import { Journal } from './journal.ts';
import type { LeaseBook } from './leases.ts';
import type { Ledger } from './ledger.ts';
import { PendingWrites, countCharge } from './pending-writes.ts';
import { Refunds } from './refunds.ts';
import type { BalanceReadout, ChargeSpec, Delivery, Hold, HoldPlan, PaidSqlRead, Payer, WindowOptions } from './types.ts';
import type { UsageLog } from './usage-log.ts';
import type { Wallet } from './wallet.ts';
import { WindowCharges } from './window-charges.ts';

export type { BalanceReadout, BegunDelivery, ChargeSpec, Delivery, PaidSqlRead, Payer, Settlement, WindowOptions } from './types.ts';
export type { Hold, HoldPlan } from './types.ts';

export interface BillingOptions {
  readonly ledger: Ledger;
  readonly leases: LeaseBook;
  readonly wallet: Wallet;
  readonly deliveries: DeliveryTracker;
  readonly metrics?: Metrics;
  readonly logger?: Logger;
  /** How long an in-flight delivery holds its charge without renewal (renewed at a third of it). */
  readonly deliveryTtlMs?: number;
  /** Milliseconds since the epoch; tests move it to expire a dead pod's deliveries. */
  readonly now?: () => number;
  /** How long a lease's settlement waits for its holds' releases (`credit/holds.ts`) before orphaning them. */
  readonly holdWaitMs?: number;
  /** A charge that was forgiven: it reached PostgreSQL after its lease settled, and the buckets could not cover it. */
  readonly onForgiven?: (chargeKey: string) => void;
  /** Where acknowledged charges' per-request records go (the bucket's `usage/`); none in some tests. */
  readonly usage?: UsageLog;
}

/** How long a delivery holds its charge without renewal, unless the options say otherwise. */
const DELIVERY_TTL_MS = 60_000;
/** Two flush intervals: every live pod has sent its releases by then. */
const HOLD_WAIT_MS = 500;

export class Billing {
  readonly #credit: Credit;
  readonly #windows: WindowCharges;
  readonly #refunds: Refunds;
  readonly #writes: PendingWrites;
  readonly #journal: Journal;
  readonly #usage: UsageLog | undefined;
  readonly #metrics: Metrics | undefined;

  constructor(options: BillingOptions) {
    const now = options.now ?? Date.now;
    const { ledger, leases, wallet, deliveries, metrics, logger } = options;
    const ttlMs = options.deliveryTtlMs ?? DELIVERY_TTL_MS;
    this.#metrics = metrics;
    this.#usage = options.usage;
    const writes = (this.#writes = new PendingWrites(logger));
    const journal = (this.#journal = new Journal({ leases, ledger, usage: options.usage, onForgiven: options.onForgiven }));
    const holdWaitMs = options.holdWaitMs ?? HOLD_WAIT_MS;
    const credit = (this.#credit = new Credit({ ledger, leases, wallet, journal, writes, holdTtlMs: ttlMs, holdWaitMs, metrics, logger, now }));
    const refunds = (this.#refunds = new Refunds({ ledger, deliveries, credit, metrics, now }));
    this.#windows = new WindowCharges({ ledger, deliveries, credit, refunds, writes, metrics, ttlMs, now });
  }

  /**
   * The balance (DECISIONS §3 "One balance"): the buckets in PostgreSQL plus the unspent credit of
   * the open lease. `X-Credits-Remaining` reports it (read here, or in a spend's own step from the
   * same two parts), and so do admin and the dashboard (`readout`).
   */
  balance(accountId: string): Promise<number> {
    return this.#credit.balance(accountId);
  }

  /** The balance with its two buckets (admin `account show`, the dashboard's Usage page). */
  readout(accountId: string): Promise<BalanceReadout> {
    return this.#credit.readout(accountId);
  }

  /** Reads the buckets from PostgreSQL into the wallet, so lookups report them; returns them. */
  refreshBuckets(accountId: string): Promise<number> {
    return this.#credit.refreshBuckets(accountId);
  }

  /** Rule 4: a request that would create a new charge needs a balance above zero (`Balances.requireCredit`). */
  requireCredit(payer: Payer): Promise<number> {
    return this.#credit.requireCredit(payer);
  }

  /**
   * A hold of a lookup's largest possible cost, asked in the request's counter call (`credit/holds.ts`).
   * The request ends it: `deliverOnce` with the hold, or `releaseHold` when it failed first.
   */
  planHold(payer: Payer, maxMicro: number): HoldPlan {
    return this.#credit.planHold(payer, lookupChargeKey(payer.accountId), maxMicro);
  }

  /** The request that made `hold` failed before its charge: the whole hold goes back (every held response calls this as it closes; a charged one has nothing to track). */
  releaseHold(hold: Hold): Promise<void> {
    return this.#credit.holdSettled(hold) ? Promise.resolve() : this.track(this.#credit.releaseHold(hold));
  }

  /** Sends this pod's queued hold releases now (the flush does, first). */
  sendReleases(): Promise<void> {
    return this.#credit.sendReleases();
  }

  /** Charge keys whose hold release has not left this pod yet. */
  unsentReleases(): string[] {
    return this.#credit.unsentReleases();
  }

  /** Charges this pod reported that PostgreSQL has not acknowledged yet: what a SIGKILL now would forgive. */
  unacked(): { key: string; accountId: string; leaseId: string; amountMicro: number }[] {
    return this.#journal.unacked();
  }

  /**
   * A lookup: its own charge under a fresh key, after the result exists (402 if it can't be
   * covered), spent from the account's wallet (rule 7), or from the request's hold when it made
   * one. Its one delivery is its response: a response that never went out is refunded.
   */
  async deliverOnce(payer: Payer, spec: ChargeSpec, hold?: Hold): Promise<Delivery> {
    const chargeKey = hold?.key ?? lookupChargeKey(payer.accountId);
    const record = { key: chargeKey, amountMicro: spec.costMicro, breakdown: spec.breakdown, requestId: spec.requestId, queryId: spec.queryId };
    const held = hold && (await this.#credit.settleHold(hold, record));
    if (held) {
      countCharge(this.#metrics, payer, spec, held.chargedMicro);
      if (held.chargedMicro) this.#credit.record(payer, hold.leaseId, record);
    }
    const charge = held ? { settlement: held, refund: () => this.#credit.refund(payer.accountId, chargeKey) } : await this.#credit.charge(payer, hold ? { ...record, key: lookupChargeKey(payer.accountId) } : record, spec);
    const { settlement } = charge;
    let ended = false;
    return {
      settlement,
      chargeKey,
      holdsCharge: true,
      complete: async () => {
        ended = true;
      },
      abandon: async () => {
        const refunded = ended || !settlement.chargedMicro ? 0 : await this.track(charge.refund());
        ended = true;
        return { chargedMicro: 0, balanceMicro: settlement.balanceMicro + refunded };
      },
      sent: () => undefined,
    };
  }

  /** Refunds a lookup's charge that reached the ledger (an operator's refund, or a broken response's); once. */
  refundLookup(chargeKey: string): Promise<number> {
    return this.#credit.refundLeaseCharge(chargeKey);
  }

  /** Settles the account's open lease now, if it has one (an operator's balance change, a test). */
  settleOpenLease(accountId: string): Promise<void> {
    return this.#credit.settleOpenLease(accountId);
  }

  /** Settles a lease (rule 7), from any pod, any number of times. */
  settleLease(accountId: string, leaseId: string): Promise<void> {
    return this.#credit.settleLease(accountId, leaseId);
  }

  /** Sends this pod's hold releases, then writes its journal to the ledger; every 250 ms (`loops.ts`) and on drain. */
  async flush(): Promise<void> {
    await this.#credit.sendReleases();
    await this.#credit.flush();
    await this.#refunds.retryOwed();
  }

  /** Stores the usage log's outbox (any pod's records) as files (`usage-log.ts`); the loop's and the drain's. */
  async storeUsage(): Promise<void> {
    await this.#usage?.store();
  }

  /** Deletes the usage log's days past its retention. */
  async pruneUsage(): Promise<void> {
    await this.#usage?.prune();
  }

  /** The charge key of a stored result of this query the payer paid for in the last 5 minutes: a hint, never a charge decision. */
  paidSqlResult(payer: Payer, queryId: string): Promise<string | undefined> {
    return this.#windows.paidSqlResult(payer, queryId);
  }

  /** `paidSqlResult` in the request's counter call, a paid re-read's delivery begun with it (`WindowCharges.paidSqlRead`). */
  paidSqlRead(payer: Payer, queryId: string): PaidSqlRead {
    return this.#windows.paidSqlRead(payer, queryId);
  }

  /** A response under a window's charge (a SQL result, an export file): `WindowCharges.deliver`. */
  deliverWindow(payer: Payer, window: WindowSpec, options: WindowOptions): Promise<Delivery> {
    return this.#windows.deliver(payer, window, options);
  }

  /** Refunds the charges whose deliveries all died with their pod and settles expired leases (`Refunds.reconcile`). */
  async reconcile(): Promise<number> {
    // This pod's own releases first, so only holds whose pod died are reaped.
    await this.#credit.sendReleases();
    await this.#credit.reapHolds();
    return this.#refunds.reconcile();
  }

  /** Keeps a billing write alive past its response, so SIGTERM can wait for it. */
  track<T>(promise: Promise<T>): Promise<T> {
    return this.#writes.track(promise);
  }

  /**
   * Resolves once every billing write this pod keeps alive past its response (refunds, completions,
   * an early lease extension) has ended: a readout after it sees no half-made move of credit.
   */
  writesDone(): Promise<void> {
    return this.#writes.done();
  }

  /**
   * Graceful shutdown, after the server closed its connections and the loops stopped: waits for the
   * cut responses to end their deliveries (a socket's close event comes a few loop turns later),
   * abandons any still open after `waitMs` (their connections are gone; each reports the bytes it
   * had sent), and waits for every refund and completion to be written. Then writes the pending
   * lookups, settles the leases of a wallet that lives in this process (a Redis wallet's leases
   * stay for the other pods), and stores the usage log: a failure is logged, its records wait in PostgreSQL.
   */
  async drain(waitMs = 2_000): Promise<void> {
    const open = this.#windows.open;
    for (const until = Date.now() + waitMs; open.size && Date.now() < until; ) await sleep(10);
    await Promise.allSettled([...open].map((delivery) => delivery.abandon()));
    await this.writesDone();
    // The releases need Redis; the journal needs only PostgreSQL, and is this pod's alone to write.
    await this.#credit.sendReleases();
    await this.#credit.flush();
    await this.#refunds.retryOwed();
    await this.#credit.settleLocal();
    await this.track(this.storeUsage()).catch(() => undefined);
  }
}
