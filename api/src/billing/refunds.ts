/**
 * Refunds (rules 2, 5 and 8 in `billing.ts`) and the reconciler. A window's charge is refunded when
 * a delivery's break is the last word on it (`abandon`: the tracker decides, in one atomic step,
 * whether any delivery completed, is still in flight, or delivered enough bytes), or when every
 * delivery under it died with its pod (`reconcile` reaps them). A lookup's refund is in
 * `lease-wallet.ts` (its charge is in the wallet's log or under its lease).
 */
import type { Metrics } from '../metrics.ts';
import type { Balances } from './balances.ts';
import type { BytesDelivered } from './bytes-delivered.ts';
import { accountOfChargeKey, isLookupKey, sqlQueryIdOf } from './charge-keys.ts';
import type { DeliveryTracker } from './deliveries.ts';
import type { LeaseWallet } from './lease-wallet.ts';
import type { Ledger } from './ledger.ts';

export interface RefundsOptions {
  readonly ledger: Ledger;
  readonly deliveries: DeliveryTracker;
  readonly balances: Balances;
  readonly leaseWallet: LeaseWallet;
  readonly metrics?: Metrics;
  readonly now: () => number;
}

export class Refunds {
  readonly #o: RefundsOptions;

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
    if (queryId !== undefined) await this.#o.leaseWallet.forgetPaid(accountId, queryId);
    const direct = await this.#o.ledger.refund(chargeKey);
    const refunded = direct || isLookupKey(chargeKey) ? direct : await this.#o.leaseWallet.refundWindowCharge(chargeKey);
    if (refunded) {
      // A refund under a lease is counted where it is written (`LeaseWallet.refundLeaseCharge`).
      if (direct) this.#o.metrics?.refunds.inc();
      await this.#o.balances.refreshBuckets(accountId);
    }
    return refunded;
  }

  /**
   * Refunds the charges whose deliveries all died with their pod (rule 2) and settles the leases
   * past their expiry (rule 7), whichever pod took them; run by every pod. Returns the refunds.
   */
  async reconcile(): Promise<number> {
    const reaped = await this.#o.deliveries.reap(this.#o.now());
    for (const chargeKey of reaped) await this.#refundClaimed(chargeKey);
    const failures = await this.#o.leaseWallet.settleExpired();
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1) throw new AggregateError(failures, `${failures.length} expired leases could not be settled yet`);
    return reaped.length;
  }
}
