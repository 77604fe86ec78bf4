/**
 * Lookups' credit (rule 7 in `index.ts`): spending from the account's wallet, taking and
 * refilling its lease from PostgreSQL, refunding a lookup, flushing this pod's journal to the ledger
 * (`journal.ts`: the charges live in the pod until PostgreSQL has them, never only in Redis) and
 * settling leases. How big a lease is: `leaseSize` in `leases.ts`, the one statement of that rule.
 */
import type { Logger } from '@uda/shared/logger';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import type { BeginPart, PaidMarkerRider } from './reread-rider.ts';
import type { Metrics } from '../metrics.ts';
import { type Balances, insufficientCredit } from './balances.ts';
import type { Journal } from './journal.ts';
import type { ChargeSpec, Payer, Settlement } from './types.ts';
import { type LeaseBook, leaseSize, spendPerSecond } from './leases.ts';
import type { Ledger } from './ledger.ts';
import { type PendingWrites, countCharge } from './pending-writes.ts';
import type { ChargeRecord, PaidMarker, SpendResult, Wallet } from './wallet.ts';

/** A spend that finds its wallet short takes (or extends) a lease and tries again, this often. */
const SPEND_ATTEMPTS = 5;
/** How many tries a refund gives a failing journal flush before the charge stands. */
const REFUND_WAIT_ATTEMPTS = 200;
/** How often a settlement looks whether its lease's holds were released. */
const HOLD_WAIT_STEP_MS = 25;
/** Past this many accounts the last-lease memory starts over, so it never grows without bound. */
const LAST_LEASES_MAX = 10_000;

/** A lookup's charge: what its response reports, and how to refund it if the response never went out. */
export interface LookupCharge {
  readonly settlement: Settlement;
  refund(): Promise<number>;
}

export interface LeaseWalletOptions {
  readonly ledger: Ledger;
  readonly leases: LeaseBook;
  readonly wallet: Wallet;
  readonly balances: Balances;
  readonly writes: PendingWrites;
  /** This pod's charges until PostgreSQL has them. */
  readonly journal: Journal;
  /** The ledger refund of a lookup charged directly (while the wallet's store failed). */
  readonly writeRefund: (chargeKey: string) => Promise<number>;
  /** Sends this pod's queued hold releases (`holds.ts`), so a settlement counts them. */
  readonly sendReleases: () => Promise<void>;
  /** How long a settlement waits for the lease's holds to be released before it orphans them. */
  readonly holdWaitMs: number;
  readonly metrics?: Metrics;
  readonly logger?: Logger;
  readonly now: () => number;
}

export class LeaseWallet {
  readonly #o: LeaseWalletOptions;
  /** accountId → this pod's last lease for it: how fast the account spends (`spendPerSecond`). */
  readonly #lastLease = new Map<string, { micro: number; at: number }>();
  /** accountId → the lease this pod is taking for it: concurrent requests wait for one take, not one each. */
  readonly #taking = new Map<string, Promise<void>>();

  constructor(options: LeaseWalletOptions) {
    this.#o = options;
  }

  /**
   * Spends a lookup from the wallet. While the wallet's store fails (Redis down), the lookup is
   * charged in the ledger directly, as before leases: slower, never free.
   */
  async charge(payer: Payer, record: ChargeRecord, spec: ChargeSpec, rememberMs = 0, marker?: PaidMarker): Promise<LookupCharge> {
    if (!record.amountMicro) return { settlement: { chargedMicro: 0, balanceMicro: await this.#o.balances.balance(payer.accountId) }, refund: async () => 0 };
    try {
      return { settlement: await this.#spend(payer, record, spec, rememberMs, marker), refund: () => this.refund(payer.accountId, record.key) };
    } catch (error) {
      if (error instanceof ApiError) throw error;
      this.#o.logger?.warn({ err: error }, 'credit wallet unavailable: the lookup is charged in the ledger directly');
      return { settlement: await this.#chargeDirect(payer, record, spec), refund: () => this.#o.writeRefund(record.key) };
    }
  }

  /** A charge this pod reports, spent under `leaseId`: into the journal until PostgreSQL has it. */
  record(payer: Payer, leaseId: string, record: ChargeRecord, spec: ChargeSpec, window = false): void {
    this.#o.journal.add({ ...record, accountId: payer.accountId, leaseId, window, keyId: payer.keyId, route: payer.route, at: Date.now() });
  }

  async #chargeDirect(payer: Payer, record: ChargeRecord, spec: ChargeSpec): Promise<Settlement> {
    const result = await this.#o.ledger.charge({ ...record, accountId: payer.accountId, idempotencyKey: record.key });
    this.#o.balances.remember(payer.accountId, result.balanceMicro);
    if (!result.ok) throw insufficientCredit(result.balanceMicro, record.amountMicro);
    countCharge(this.#o.metrics, payer, spec, result.chargedMicro);
    // No lease: the row is on the buckets under the charge's own key. A duplicate has its record already.
    if (result.chargedMicro) this.#o.journal.directlyWritten({ ...record, accountId: payer.accountId, leaseId: '', window: false, keyId: payer.keyId, route: payer.route, at: Date.now() });
    return { chargedMicro: result.chargedMicro, balanceMicro: result.balanceMicro };
  }

  /** One script call when the wallet covers the cost; otherwise a lease from PostgreSQL first. */
  async #spend(payer: Payer, record: ChargeRecord, spec: ChargeSpec, rememberMs: number, marker: PaidMarker | undefined): Promise<Settlement> {
    for (let attempt = 0; attempt < SPEND_ATTEMPTS; attempt++) {
      const spent = await this.#o.wallet.spend(payer.accountId, record, rememberMs, marker);
      if (spent.ok) {
        const charged = spent.duplicate ? 0 : record.amountMicro;
        if (charged) this.record(payer, spent.leaseId, record, spec, rememberMs > 0);
        countCharge(this.#o.metrics, payer, spec, charged);
        const balanceMicro = await this.#balanceAfter(payer.accountId, spent);
        this.#o.balances.remember(payer.accountId, balanceMicro);
        this.#refillEarly(payer.accountId, spent.unspentMicro, record.amountMicro);
        return { chargedMicro: charged, balanceMicro };
      }
      // A closed wallet's lease is being settled (or its settler died): finish that first.
      if (spent.closedLeaseId) await this.settleLease(payer.accountId, spent.closedLeaseId);
      const inFlight = this.#taking.get(payer.accountId);
      // Another request of this pod is taking a lease: spend from it, or take one for this cost after it.
      if (inFlight) await inFlight.catch(() => undefined);
      else await this.#takeLease(payer.accountId, record.amountMicro, record.amountMicro);
    }
    throw new ApiError(ErrorCode.QUERY_BACKEND_UNAVAILABLE, {}, { 'Retry-After': '1' });
  }

  /** A spend's balance: buckets, unspent and holds from its own step; read whole when the wallet lost part of its lease with Redis. */
  async #balanceAfter(accountId: string, spent: Extract<SpendResult, { ok: true }>): Promise<number> {
    if (!spent.whole) return this.#o.balances.balance(accountId);
    return (spent.bucketsMicro ?? (await this.#o.balances.refreshBuckets(accountId))) + spent.unspentMicro + spent.heldMicro;
  }

  /**
   * After a hold (`holds.ts`): the wallet is refilled in the background, sized for the hold, when
   * the hold found it short (that request then charges the usual way) or left less than a quarter
   * of the last slice, so the next lookups hold from it instead of waiting for PostgreSQL.
   */
  afterHold(accountId: string, held: boolean, unspentMicro: number, holdMicro: number): void {
    if (held) return this.#refillEarly(accountId, unspentMicro, holdMicro);
    if (this.#taking.has(accountId)) return;
    void this.#o.writes.track(this.#takeLease(accountId, holdMicro, holdMicro).catch(() => undefined));
  }

  /** Extends the lease in the background when a quarter of the last slice is left, so requests rarely wait for PostgreSQL. */
  #refillEarly(accountId: string, unspentMicro: number, costMicro: number): void {
    const last = this.#lastLease.get(accountId);
    if (!last || unspentMicro >= last.micro / 4 || this.#taking.has(accountId)) return;
    // A 402 here only means the balance is nearly spent: no more early takes (the next request that
    // can't be covered takes its own, and gets the 402).
    const refused = (error: unknown) => {
      if (!(error instanceof ApiError)) throw error;
      this.#lastLease.delete(accountId);
    };
    void this.#o.writes.track(this.#takeLease(accountId, costMicro, last.micro / 4).catch(refused)).catch(() => undefined);
  }

  /** Resolves once this pod's lease take for the account (if one runs) has ended, however it ended. */
  async takeSettled(accountId: string): Promise<void> {
    await this.#taking.get(accountId)?.catch(() => undefined);
  }

  /** One lease take per account at a time in this pod; none while the wallet holds `enoughMicro`. */
  #takeLease(accountId: string, costMicro: number, enoughMicro: number): Promise<void> {
    const taking = this.#takeLeaseNow(accountId, costMicro, enoughMicro).finally(() => this.#taking.delete(accountId));
    this.#taking.set(accountId, taking);
    return taking;
  }

  /** Moves a slice of the balance (`leaseSize`) into the account's lease and its wallet; 402 when even `costMicro` is not there. */
  async #takeLeaseNow(accountId: string, costMicro: number, enoughMicro: number): Promise<void> {
    const { wallet, leases } = this.#o;
    // A request that found the wallet short may get here after another take (of this pod or
    // another) refilled it. Taking again would move more of the balance out of the buckets, up to
    // half of what is left each time: a burst of such takes drained the buckets, and a lookup got a
    // 402 while the wallet held the whole balance.
    if ((await wallet.unspent(accountId)) >= enoughMicro) return;
    const now = this.#o.now();
    const spendPerSecondMicro = spendPerSecond(this.#lastLease.get(accountId), now);
    const taken = await leases.take(accountId, (balanceMicro) => leaseSize({ costMicro, spendPerSecondMicro, balanceMicro }), costMicro);
    if (!taken.ok) {
      await wallet.storeBuckets(accountId, taken.buckets);
      throw insufficientCredit(taken.buckets.micro + (await this.#o.balances.leaseCredit(accountId)).micro, costMicro);
    }
    await wallet.fund(accountId, taken.leaseId, taken.addedMicro, taken.buckets, taken.part);
    if (this.#lastLease.size >= LAST_LEASES_MAX) this.#lastLease.clear();
    this.#lastLease.set(accountId, { micro: taken.addedMicro, at: now });
  }

  /**
   * Refunds a charge this pod reported whose response never went out: taken out of the journal
   * (back into the wallet) while it is not written; once written, in the ledger under its row.
   */
  async refund(accountId: string, chargeKey: string): Promise<number> {
    let entry = this.#o.journal.cancel(chargeKey);
    // Its batch is on its way to PostgreSQL: refund it where it lands. A flush that keeps failing leaves the charge standing.
    for (let attempt = 0; entry === 'writing' && attempt < REFUND_WAIT_ATTEMPTS; attempt++) {
      await this.#o.journal.flush().catch(() => sleep(HOLD_WAIT_STEP_MS));
      entry = this.#o.journal.cancel(chargeKey);
    }
    if (entry === 'writing') return 0;
    if (!entry) return this.refundLeaseCharge(chargeKey);
    this.#o.metrics?.refunds.inc();
    await this.#o.wallet.credit(accountId, entry.leaseId, entry.amountMicro).catch(() => undefined);
    return entry.amountMicro;
  }

  /**
   * Refunds a window charge spent from the wallet: its record is written to the ledger first (a
   * window's charges are numbered from the ledger, so its refund must leave a row), then refunded
   * under its lease. 0 when the charge is not a lease's (or is refunded already).
   */
  async refundWindowCharge(chargeKey: string): Promise<number> {
    await this.flush();
    return this.refundLeaseCharge(chargeKey);
  }

  /**
   * The charge key a re-read marker names; undefined while its store fails. A missing marker only
   * sends the caller the slow way (a run that passes the cap, a window read from the ledger).
   */
  async paidMarker(accountId: string, name: string): Promise<string | undefined> {
    return this.#o.wallet.paidMarker(accountId, name).catch(() => undefined);
  }

  /** `paidMarker` as a rider of the request's counter call; undefined for a wallet in this process. */
  paidMarkerRider(accountId: string, name: string, begin?: BeginPart): PaidMarkerRider | undefined {
    return this.#o.wallet.paidMarkerRider(accountId, name, begin);
  }

  /** Sets a re-read marker for a result that cost nothing; a failed store leaves none (the slow way). */
  async markPaid(accountId: string, marker: PaidMarker, chargeKey: string): Promise<void> {
    await this.#o.wallet.markPaid(accountId, marker, chargeKey).catch(() => undefined);
  }

  /**
   * Removes a re-read marker before its charge is refunded. A store that fails does not stop the
   * refund (the customer is owed it); the marker then lives out its window, and a delivery on the
   * refunded key is still refused by the delivery tracker.
   */
  async forgetPaid(accountId: string, name: string): Promise<void> {
    await this.#o.wallet.forgetPaid(accountId, name).catch((error: unknown) => this.#o.logger?.warn({ err: error }, 're-read marker not removed'));
  }

  /** Whether a charge key was spent from the wallet; false while its store fails (nothing to go on). */
  async spent(accountId: string, chargeKey: string): Promise<boolean> {
    return this.#o.wallet.spent(accountId, chargeKey).catch(() => false);
  }

  /**
   * Refunds a charge that reached the ledger, into the wallet while its lease is open; once. A
   * window's has its own row; a lookup is inside its flush's aggregated row (this pod remembers
   * which), or has its own row on the buckets when it arrived after its lease settled.
   */
  async refundLeaseCharge(chargeKey: string): Promise<number> {
    const written = this.#o.journal.written(chargeKey);
    if (written?.forgiven) return 0;
    if (written?.late) {
      const refunded = await this.#o.ledger.refund(chargeKey);
      if (refunded) this.#o.metrics?.refunds.inc();
      return refunded;
    }
    const aggregated = written && !written.entry.window ? written.entry : undefined;
    const refund = aggregated ? await this.#o.leases.refundAggregated(aggregated) : await this.#o.leases.refund(chargeKey);
    if (!refund?.refundedMicro) return 0;
    this.#o.metrics?.refunds.inc();
    if (refund.leaseOpen) await this.#o.wallet.credit(refund.accountId, refund.leaseId, refund.refundedMicro);
    await this.#o.wallet.storeBuckets(refund.accountId, refund.buckets);
    return refund.refundedMicro;
  }

  /** Settles the account's open lease now, if it has one. */
  async settleOpenLease(accountId: string): Promise<void> {
    const leaseId = await this.#o.leases.open(accountId);
    if (leaseId) await this.settleLease(accountId, leaseId);
  }

  /**
   * Settles a lease (rule 7): closes its wallet so nothing more is spent on it, writes this pod's
   * journal, then returns the unspent credit in one transaction. Any pod may settle any lease, any
   * number of times; another pod's charges that arrive after it are charged on the buckets
   * (`journal.ts`). A wallet lost with Redis cannot be closed: the ledger alone decides.
   */
  async settleLease(accountId: string, leaseId: string): Promise<void> {
    await this.#o.wallet.close(accountId, leaseId);
    await this.#endHolds(accountId, leaseId);
    await this.flush();
    const settled = await this.#o.leases.settle(leaseId);
    if (settled) await this.#o.wallet.storeBuckets(accountId, settled.buckets);
  }

  /**
   * Before a closed lease's log is counted, its holds' releases should be in it: this pod sends its
   * own, and every pod's flush sends theirs within 250 ms. Holds still there after `holdWaitMs`
   * (their pod died, or their request is slow) are orphaned: their release then charges the next
   * open lease, or is forgiven (`wallet.ts`).
   */
  async #endHolds(accountId: string, leaseId: string): Promise<void> {
    const { wallet, sendReleases, holdWaitMs } = this.#o;
    for (const until = this.#o.now() + holdWaitMs, started = Date.now(); ; ) {
      await sendReleases();
      if ((await wallet.held(accountId, leaseId)) === 0) return;
      // Either clock may be a test's: the wait ends on whichever passes first.
      if (this.#o.now() >= until || Date.now() - started >= holdWaitMs) break;
      await sleep(HOLD_WAIT_STEP_MS);
    }
    await wallet.orphanHolds(accountId, leaseId);
  }

  /** Settles every lease past its expiry, whichever pod took it; returns the failures, each lease on its own. */
  async settleExpired(): Promise<unknown[]> {
    // One account whose flush lock a dead pod still holds (until the lock lapses) must not hold back
    // every other lease: each settles on its own, and the failures are reported after the pass.
    const failures: unknown[] = [];
    for (const lease of await this.#o.leases.expired()) await this.settleLease(lease.accountId, lease.leaseId).catch((error: unknown) => failures.push(error));
    return failures;
  }

  /** Settles the leases of a wallet that lives in this process (a Redis wallet's leases stay for the other pods). */
  async settleLocal(): Promise<void> {
    if (!this.#o.wallet.local) return;
    for (const lease of await this.#o.wallet.openLeases()) await this.settleLease(lease.accountId, lease.leaseId);
  }

  /** Writes this pod's journal to the ledger; the buckets a late charge moved are read again. */
  async flush(): Promise<void> {
    for (const accountId of await this.#o.journal.flush()) await this.#o.balances.refreshBuckets(accountId);
  }
}
