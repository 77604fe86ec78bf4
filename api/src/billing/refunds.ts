/**
 * Refunds (rules 2, 5 and 8 in `index.ts`) and the reconciler. A window's charge is refunded when
 * a delivery's break is the last word on it (`abandon`: the tracker decides, in one atomic step,
 * whether any delivery completed, is still in flight, or delivered enough bytes), or when every
 * delivery under it died with its pod (`reconcile` reaps them). A lookup's refund is in
 * the credit owner (`credit/wallet-spends.ts`: its charge is in the pod's journal or under its lease).
 *
 * A window's charge may still be in the journal of the pod that spent it when another pod's break
 * decides its refund: the refund is then owed, and this pod tries it again after each of its
 * flushes until the charge has reached the ledger (every live pod flushes within 250 ms), for
 * `OWED_MS`; a charge that never arrives died with its pod's journal (forgiven, nothing to refund).
 */
import type { Metrics } from '../metrics.ts';
import type { BytesDelivered } from './bytes-delivered.ts';
import { accountOfChargeKey, isLookupKey, sqlQueryIdOf } from './charge-keys.ts';
import type { DeliveryTracker } from './deliveries.ts';
import type { Credit } from './credit/index.ts';
import type { Ledger } from './ledger.ts';

/** How long an owed window refund waits for its charge to reach the ledger. */
const OWED_MS = 60_000;

export interface RefundsOptions {
  readonly ledger: Ledger;
  readonly deliveries: DeliveryTracker;
  readonly credit: Credit;
  readonly metrics?: Metrics;
  readonly now: () => number;
}

export class Refunds {
  readonly #o: RefundsOptions;
  /** Window charge key → until when its owed refund is tried again. */
  readonly #owed = new Map<string, number>();

  constructor(options: RefundsOptions) {
    this.#o = options;
  }

  /** A delivery broke: refunds its charge when the tracker says this break decides it; returns the refund. */
  async abandon(chargeKey: string, deliveryId: string, delivered: BytesDelivered | undefined): Promise<number> {
    if (!(await this.#o.deliveries.abandon(chargeKey, deliveryId, this.#o.now(), delivered))) return 0;
    return this.#refundClaimed(chargeKey);
  }

  /** Writes a refund claimed through the tracker; the tracker then lets the window charge anew. */
  async #refundClaimed(chargeKey: string): Promise<number> {
    const refunded = await this.writeRefund(chargeKey);
    await this.#o.deliveries.refunded(chargeKey);
    return refunded;
  }

  /**
   * Refunds a charge in the ledger and refreshes the buckets the wallet reports. A window charge
   * spent from the wallet (`window-charges.ts`) is refunded under its lease; one charged on the
   * buckets directly (while the wallet's store failed) in the ledger alone.
   */
  async writeRefund(chargeKey: string): Promise<number> {
    const accountId = accountOfChargeKey(chargeKey);
    // The re-read marker goes first: once the refund is written, no re-read may find the window paid.
    const queryId = sqlQueryIdOf(chargeKey);
    if (queryId !== undefined) await this.#o.credit.forgetPaid(accountId, queryId);
    const direct = await this.#o.ledger.refund(chargeKey);
    const refunded = direct || isLookupKey(chargeKey) ? direct : await this.#o.credit.refundWindowCharge(chargeKey);
    // Not in the ledger yet (another pod's journal), nor refunded already: owed.
    if (!refunded && !isLookupKey(chargeKey) && !(await this.#o.ledger.refunded(chargeKey)) && !this.#owed.has(chargeKey)) this.#owed.set(chargeKey, Date.now() + OWED_MS);
    if (refunded) {
      // A refund under a lease is counted where it is written (`Credit.refundLeaseCharge`).
      if (direct) this.#o.metrics?.refunds.inc();
      await this.#o.credit.refreshBuckets(accountId);
    }
    return refunded;
  }

  /** Tries the owed window refunds again (after this pod's flush); each is written once its charge is in the ledger. */
  async retryOwed(): Promise<void> {
    for (const [chargeKey, until] of [...this.#owed]) {
      if ((await this.writeRefund(chargeKey)) > 0 || Date.now() > until) this.#owed.delete(chargeKey);
    }
  }

  /**
   * Refunds the charges whose deliveries all died with their pod (rule 2) and settles the leases
   * past their expiry (rule 7), whichever pod took them; run by every pod. Returns the refunds.
   */
  async reconcile(): Promise<number> {
    const reaped = await this.#o.deliveries.reap(this.#o.now());
    for (const chargeKey of reaped) await this.#refundClaimed(chargeKey);
    const failures = await this.#o.credit.settleExpired();
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1) throw new AggregateError(failures, `${failures.length} expired leases could not be settled yet`);
    return reaped.length;
  }
}
