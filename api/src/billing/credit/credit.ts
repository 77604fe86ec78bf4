/**
 * The credit owner: everything that moves an account's credit between PostgreSQL, the wallet and
 * this pod's journal, behind one class that the rest of billing calls (charges, refunds, windows,
 * the reconciler). Its parts, one job each, are built here and given to each other as objects:
 * - `balances.ts`: the one balance; `readouts.ts`: every read of it, after this pod's own moves;
 * - `release-queue.ts` and `holds.ts`: a lookup's hold and its release;
 * - `lease-takes.ts`: taking and refilling leases; `lease-settlements.ts`: settling them, and the journal's flush;
 * - `wallet-spends.ts`: spending a charge from the wallet, and refunding it.
 */
import type { Logger } from '@uda/shared/logger';
import type { Metrics } from '../../metrics.ts';
import type { BeginPart, PaidMarkerRider } from '../reread-rider.ts';
import type { Journal } from '../journal.ts';
import type { LeaseBook } from '../leases.ts';
import type { Ledger } from '../ledger.ts';
import type { PendingWrites } from '../pending-writes.ts';
import type { BalanceReadout, ChargeSpec, Hold, HoldPlan, Payer, Settlement } from '../types.ts';
import type { ChargeRecord, PaidMarker, Wallet } from '../wallet.ts';
import { Balances } from './balances.ts';
import { Holds } from './holds.ts';
import { LeaseSettlements } from './lease-settlements.ts';
import { LeaseTakes } from './lease-takes.ts';
import { Readouts } from './readouts.ts';
import { ReleaseQueue } from './release-queue.ts';
import { type WalletCharge, WalletSpends } from './wallet-spends.ts';

export interface CreditOptions {
  readonly ledger: Ledger;
  readonly leases: LeaseBook;
  readonly wallet: Wallet;
  readonly journal: Journal;
  readonly writes: PendingWrites;
  /** How long a hold lives without its release. */
  readonly holdTtlMs: number;
  /** How long a lease's settlement waits for its holds' releases before orphaning them. */
  readonly holdWaitMs: number;
  readonly metrics?: Metrics;
  readonly logger?: Logger;
  readonly now: () => number;
}

export class Credit {
  readonly #wallet: Wallet;
  readonly #logger: Logger | undefined;
  readonly #balances: Balances;
  readonly #readouts: Readouts;
  readonly #releases: ReleaseQueue;
  readonly #holds: Holds;
  readonly #settlements: LeaseSettlements;
  readonly #spends: WalletSpends;

  constructor(options: CreditOptions) {
    const { ledger, leases, wallet, journal, writes, metrics, logger, now } = options;
    this.#wallet = wallet;
    this.#logger = logger;
    const balances = (this.#balances = new Balances({ leases, wallet, journal, logger }));
    const releases = (this.#releases = new ReleaseQueue(wallet));
    const takes = new LeaseTakes({ wallet, leases, balances, writes, now });
    const readouts = (this.#readouts = new Readouts({ balances, releases, takes, now }));
    this.#holds = new Holds({ wallet, releases, balances, readouts, takes, ttlMs: options.holdTtlMs, now });
    const settlements = (this.#settlements = new LeaseSettlements({ wallet, leases, journal, balances, releases, holdWaitMs: options.holdWaitMs, now }));
    this.#spends = new WalletSpends({ ledger, leases, wallet, journal, balances, readouts, takes, settlements, metrics, logger });
  }

  // The balance (`readouts.ts`).
  balance(accountId: string): Promise<number> {
    return this.#readouts.balance(accountId);
  }

  readout(accountId: string): Promise<BalanceReadout> {
    return this.#readouts.readout(accountId);
  }

  reported(accountId: string): Promise<number> {
    return this.#readouts.reported(accountId);
  }

  requireCredit(payer: Payer): Promise<number> {
    return this.#readouts.requireCredit(payer);
  }

  refreshBuckets(accountId: string): Promise<number> {
    return this.#balances.refreshBuckets(accountId);
  }

  // Holds (`holds.ts`).
  planHold(payer: Payer, key: string, maxMicro: number): HoldPlan {
    return this.#holds.plan(payer, key, maxMicro);
  }

  settleHold(hold: Hold, record: ChargeRecord): Promise<Settlement | undefined> {
    return this.#holds.settle(hold, record);
  }

  holdSettled(hold: Hold): boolean {
    return this.#holds.settled(hold);
  }

  releaseHold(hold: Hold): Promise<void> {
    return this.#holds.release(hold);
  }

  sendReleases(): Promise<void> {
    return this.#releases.send();
  }

  unsentReleases(): string[] {
    return this.#releases.unsent();
  }

  /** Releases the holds whose pod died; a wallet that fails now is left for the next pass. */
  reapHolds(): Promise<string[]> {
    return this.#balances.orWhileWalletFails(this.#holds.reap(), []);
  }

  // Spends and refunds (`wallet-spends.ts`).
  charge(payer: Payer, record: ChargeRecord, spec: ChargeSpec, rememberMs?: number, marker?: PaidMarker): Promise<WalletCharge> {
    return this.#spends.charge(payer, record, spec, rememberMs, marker);
  }

  record(payer: Payer, leaseId: string, record: ChargeRecord): void {
    this.#spends.record(payer, leaseId, record);
  }

  refund(accountId: string, chargeKey: string): Promise<number> {
    return this.#spends.refund(accountId, chargeKey);
  }

  refundWindowCharge(chargeKey: string): Promise<number> {
    return this.#spends.refundWindowCharge(chargeKey);
  }

  refundLeaseCharge(chargeKey: string): Promise<number> {
    return this.#spends.refundLeaseCharge(chargeKey);
  }

  // Leases (`lease-settlements.ts`).
  settleOpenLease(accountId: string): Promise<void> {
    return this.#settlements.settleOpenLease(accountId);
  }

  settleLease(accountId: string, leaseId: string): Promise<void> {
    return this.#settlements.settleLease(accountId, leaseId);
  }

  settleExpired(): Promise<unknown[]> {
    return this.#settlements.settleExpired();
  }

  settleLocal(): Promise<void> {
    return this.#settlements.settleLocal();
  }

  flush(): Promise<void> {
    return this.#settlements.flush();
  }

  // Re-read markers and spent keys: hints read from the wallet, never charge decisions.

  /**
   * The charge key a re-read marker names; undefined while its store fails. A missing marker only
   * sends the caller the slow way (a run that passes the cap, a window read from the ledger).
   */
  async paidMarker(accountId: string, name: string): Promise<string | undefined> {
    return this.#wallet.paidMarker(accountId, name).catch(() => undefined);
  }

  /** `paidMarker` as a rider of the request's counter call; undefined for a wallet in this process. */
  paidMarkerRider(accountId: string, name: string, begin?: BeginPart): PaidMarkerRider | undefined {
    return this.#wallet.paidMarkerRider(accountId, name, begin);
  }

  /** Sets a re-read marker for a result that cost nothing; a failed store leaves none (the slow way). */
  async markPaid(accountId: string, marker: PaidMarker, chargeKey: string): Promise<void> {
    await this.#wallet.markPaid(accountId, marker, chargeKey).catch(() => undefined);
  }

  /**
   * Removes a re-read marker before its charge is refunded. A store that fails does not stop the
   * refund (the customer is owed it); the marker then lives out its window, and a delivery on the
   * refunded key is still refused by the delivery tracker.
   */
  async forgetPaid(accountId: string, name: string): Promise<void> {
    await this.#wallet.forgetPaid(accountId, name).catch((error: unknown) => this.#logger?.warn({ err: error }, 're-read marker not removed'));
  }

  /** Whether a charge key was spent from the wallet; false while its store fails (nothing to go on). */
  async spent(accountId: string, chargeKey: string): Promise<boolean> {
    return this.#wallet.spent(accountId, chargeKey).catch(() => false);
  }
}
