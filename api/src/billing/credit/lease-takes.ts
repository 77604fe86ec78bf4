/**
 * Taking and refilling an account's credit lease from PostgreSQL into the wallet (rule 7 in the
 * billing door). One take per account at a time in this pod; a take in the background refills the
 * wallet before it runs dry, so lookups rarely wait for PostgreSQL. How big a lease is: `leaseSize`
 * (`leases.ts`), the one statement of that rule.
 */
import { ApiError } from '../../errors/api-error.ts';
import { type LeaseBook, leaseSize, spendPerSecond } from '../leases.ts';
import type { PendingWrites } from '../pending-writes.ts';
import type { Wallet } from '../wallet.ts';
import { type Balances, insufficientCredit } from './balances.ts';

/** Past this many accounts the last-lease memory starts over, so it never grows without bound. */
const LAST_LEASES_MAX = 10_000;

export interface LeaseTakesOptions {
  readonly wallet: Wallet;
  readonly leases: LeaseBook;
  readonly balances: Balances;
  readonly writes: PendingWrites;
  readonly now: () => number;
}

export class LeaseTakes {
  readonly #o: LeaseTakesOptions;
  /** accountId → this pod's last lease for it: how fast the account spends (`spendPerSecond`). */
  readonly #lastLease = new Map<string, { micro: number; at: number }>();
  /** accountId → the lease this pod is taking for it: concurrent requests wait for one take, not one each. */
  readonly #taking = new Map<string, Promise<void>>();

  constructor(options: LeaseTakesOptions) {
    this.#o = options;
  }

  /** This pod's take for the account, while one runs. */
  inFlight(accountId: string): Promise<void> | undefined {
    return this.#taking.get(accountId);
  }

  /** Resolves once this pod's lease take for the account (if one runs) has ended, however it ended. */
  async settled(accountId: string): Promise<void> {
    await this.#taking.get(accountId)?.catch(() => undefined);
  }

  /**
   * After a hold (`holds.ts`): the wallet is refilled in the background, sized for the hold, when
   * the hold found it short (that request then charges the usual way) or left less than a quarter
   * of the last slice, so the next lookups hold from it instead of waiting for PostgreSQL.
   */
  afterHold(accountId: string, held: boolean, unspentMicro: number, holdMicro: number): void {
    if (held) return this.refillEarly(accountId, unspentMicro, holdMicro);
    if (this.#taking.has(accountId)) return;
    void this.#o.writes.track(this.take(accountId, holdMicro, holdMicro).catch(() => undefined));
  }

  /** Extends the lease in the background when a quarter of the last slice is left, so requests rarely wait for PostgreSQL. */
  refillEarly(accountId: string, unspentMicro: number, costMicro: number): void {
    const last = this.#lastLease.get(accountId);
    if (!last || unspentMicro >= last.micro / 4 || this.#taking.has(accountId)) return;
    // A 402 here only means the balance is nearly spent: no more early takes (the next request that
    // can't be covered takes its own, and gets the 402).
    const refused = (error: unknown) => {
      if (!(error instanceof ApiError)) throw error;
      this.#lastLease.delete(accountId);
    };
    void this.#o.writes.track(this.take(accountId, costMicro, last.micro / 4).catch(refused)).catch(() => undefined);
  }

  /** One lease take per account at a time in this pod; none while the wallet holds `enoughMicro`. */
  take(accountId: string, costMicro: number, enoughMicro: number): Promise<void> {
    const taking = this.#takeNow(accountId, costMicro, enoughMicro).finally(() => this.#taking.delete(accountId));
    this.#taking.set(accountId, taking);
    return taking;
  }

  /** Moves a slice of the balance (`leaseSize`) into the account's lease and its wallet; 402 when even `costMicro` is not there. */
  async #takeNow(accountId: string, costMicro: number, enoughMicro: number): Promise<void> {
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
}
