/**
 * Spending from the account's wallet (rule 7 in the billing door): a lookup's charge, or a window's
 * (a SQL result's, an export file's), in one wallet step when the lease covers it, after a lease
 * take otherwise; and the refunds of those charges, from the journal while they are not written,
 * under their lease once they are. While the wallet's store fails (Redis down) a charge goes to the
 * ledger directly, as before leases: slower, never free.
 */
import type { Logger } from '@uda/shared/logger';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError } from '../../errors/api-error.ts';
import { ErrorCode } from '../../errors/codes.ts';
import type { Metrics } from '../../metrics.ts';
import type { Journal } from '../journal.ts';
import type { LeaseBook } from '../leases.ts';
import type { Ledger } from '../ledger.ts';
import { countCharge } from '../pending-writes.ts';
import type { ChargeSpec, Payer, Settlement } from '../types.ts';
import type { ChargeRecord, PaidMarker, SpendResult, Wallet } from '../wallet.ts';
import { type Balances, insufficientCredit } from './balances.ts';
import type { LeaseSettlements } from './lease-settlements.ts';
import type { LeaseTakes } from './lease-takes.ts';
import type { Readouts } from './readouts.ts';

/** A spend that finds its wallet short takes (or extends) a lease and tries again, this often. */
const SPEND_ATTEMPTS = 5;
/** How many tries a refund gives a failing journal flush before the charge stands. */
const REFUND_WAIT_ATTEMPTS = 200;
/** How long a refund waits between those tries. */
const REFUND_WAIT_STEP_MS = 25;

/** A charge: what its response reports, and how to refund it if the response never went out. */
export interface WalletCharge {
  readonly settlement: Settlement;
  refund(): Promise<number>;
}

export interface WalletSpendsOptions {
  readonly ledger: Ledger;
  readonly leases: LeaseBook;
  readonly wallet: Wallet;
  /** This pod's charges until PostgreSQL has them. */
  readonly journal: Journal;
  readonly balances: Balances;
  readonly readouts: Readouts;
  readonly takes: LeaseTakes;
  readonly settlements: LeaseSettlements;
  readonly metrics?: Metrics;
  readonly logger?: Logger;
}

export class WalletSpends {
  readonly #o: WalletSpendsOptions;

  constructor(options: WalletSpendsOptions) {
    this.#o = options;
  }

  /**
   * Spends a charge from the wallet. While the wallet's store fails (Redis down), it is charged in
   * the ledger directly. `rememberMs` and `marker`: a window's key and re-read marker (`wallet.ts`).
   */
  async charge(payer: Payer, record: ChargeRecord, spec: ChargeSpec, rememberMs = 0, marker?: PaidMarker): Promise<WalletCharge> {
    if (!record.amountMicro) return { settlement: { chargedMicro: 0, balanceMicro: await this.#o.readouts.balance(payer.accountId) }, refund: async () => 0 };
    try {
      return { settlement: await this.#spend(payer, record, spec, rememberMs, marker), refund: () => this.refund(payer.accountId, record.key) };
    } catch (error) {
      if (error instanceof ApiError) throw error;
      this.#o.logger?.warn({ err: error }, 'credit wallet unavailable: the charge is written to the ledger directly');
      return { settlement: await this.#chargeDirect(payer, record, spec), refund: () => this.#refundDirect(payer.accountId, record.key) };
    }
  }

  /** A charge this pod reports, spent under `leaseId`: into the journal until PostgreSQL has it. */
  record(payer: Payer, leaseId: string, record: ChargeRecord, window = false): void {
    this.#o.journal.add({ ...record, accountId: payer.accountId, leaseId, window, keyId: payer.keyId, route: payer.route, at: Date.now() });
  }

  async #chargeDirect(payer: Payer, record: ChargeRecord, spec: ChargeSpec): Promise<Settlement> {
    const result = await this.#o.ledger.charge({ ...record, accountId: payer.accountId, idempotencyKey: record.key });
    this.#o.readouts.remember(payer.accountId, result.balanceMicro);
    if (!result.ok) throw insufficientCredit(result.balanceMicro, record.amountMicro);
    countCharge(this.#o.metrics, payer, spec, result.chargedMicro);
    // No lease: the row is on the buckets under the charge's own key. A duplicate has its record already.
    if (result.chargedMicro) this.#o.journal.directlyWritten({ ...record, accountId: payer.accountId, leaseId: '', window: false, keyId: payer.keyId, route: payer.route, at: Date.now() });
    return { chargedMicro: result.chargedMicro, balanceMicro: result.balanceMicro };
  }

  /** A charge written to the ledger directly (its store failed) is refunded there alone. */
  async #refundDirect(accountId: string, chargeKey: string): Promise<number> {
    const refunded = await this.#o.ledger.refund(chargeKey);
    if (refunded) {
      this.#o.metrics?.refunds.inc();
      await this.#o.balances.refreshBuckets(accountId);
    }
    return refunded;
  }

  /** One script call when the wallet covers the cost; otherwise a lease from PostgreSQL first. */
  async #spend(payer: Payer, record: ChargeRecord, spec: ChargeSpec, rememberMs: number, marker: PaidMarker | undefined): Promise<Settlement> {
    const { wallet, takes, settlements } = this.#o;
    for (let attempt = 0; attempt < SPEND_ATTEMPTS; attempt++) {
      const spent = await wallet.spend(payer.accountId, record, rememberMs, marker);
      if (spent.ok) {
        const charged = spent.duplicate ? 0 : record.amountMicro;
        if (charged) this.record(payer, spent.leaseId, record, rememberMs > 0);
        countCharge(this.#o.metrics, payer, spec, charged);
        const balanceMicro = await this.#balanceAfter(payer.accountId, spent);
        this.#o.readouts.remember(payer.accountId, balanceMicro);
        takes.refillEarly(payer.accountId, spent.unspentMicro, record.amountMicro);
        return { chargedMicro: charged, balanceMicro };
      }
      // A closed wallet's lease is being settled (or its settler died): finish that first.
      if (spent.closedLeaseId) await settlements.settleLease(payer.accountId, spent.closedLeaseId);
      const inFlight = takes.inFlight(payer.accountId);
      // Another request of this pod is taking a lease: spend from it, or take one for this cost after it.
      if (inFlight) await inFlight.catch(() => undefined);
      else await takes.take(payer.accountId, record.amountMicro, record.amountMicro);
    }
    throw new ApiError(ErrorCode.QUERY_BACKEND_UNAVAILABLE, {}, { 'Retry-After': '1' });
  }

  /** A spend's balance: buckets, unspent and holds from its own step; read whole when the wallet lost part of its lease with Redis. */
  async #balanceAfter(accountId: string, spent: Extract<SpendResult, { ok: true }>): Promise<number> {
    if (!spent.whole) return this.#o.readouts.balance(accountId);
    return (spent.bucketsMicro ?? (await this.#o.balances.refreshBuckets(accountId))) + spent.unspentMicro + spent.heldMicro;
  }

  /**
   * Refunds a charge this pod reported whose response never went out: taken out of the journal
   * (back into the wallet) while it is not written; once written, in the ledger under its row.
   */
  async refund(accountId: string, chargeKey: string): Promise<number> {
    const { journal } = this.#o;
    let entry = journal.cancel(chargeKey);
    // Its batch is on its way to PostgreSQL: refund it where it lands. A flush that keeps failing leaves the charge standing.
    for (let attempt = 0; entry === 'writing' && attempt < REFUND_WAIT_ATTEMPTS; attempt++) {
      await journal.flush().catch(() => sleep(REFUND_WAIT_STEP_MS));
      entry = journal.cancel(chargeKey);
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
    await this.#o.settlements.flush();
    return this.refundLeaseCharge(chargeKey);
  }

  /**
   * Refunds a charge that reached the ledger, into the wallet while its lease is open; once. A
   * window's has its own row; a lookup is inside its flush's aggregated row (this pod remembers
   * which), or has its own row on the buckets when it arrived after its lease settled.
   */
  async refundLeaseCharge(chargeKey: string): Promise<number> {
    const { journal, ledger, leases, wallet, metrics } = this.#o;
    const written = journal.written(chargeKey);
    if (written?.forgiven) return 0;
    if (written?.late) {
      const refunded = await ledger.refund(chargeKey);
      if (refunded) metrics?.refunds.inc();
      return refunded;
    }
    const aggregated = written && !written.entry.window ? written.entry : undefined;
    const refund = aggregated ? await leases.refundAggregated(aggregated) : await leases.refund(chargeKey);
    if (!refund?.refundedMicro) return 0;
    metrics?.refunds.inc();
    if (refund.leaseOpen) await wallet.credit(refund.accountId, refund.leaseId, refund.refundedMicro);
    await wallet.storeBuckets(refund.accountId, refund.buckets);
    return refund.refundedMicro;
  }
}
