/**
 * The one balance (rule 7 in the billing door; DECISIONS §3 "One balance"): the buckets in
 * PostgreSQL plus the unspent credit of the open lease. Every readout (headers, admin, the
 * dashboard) reads it through `readouts.ts`, which first lets this pod's own moves of credit land.
 * The lease's unspent credit is the wallet's (one Redis read) while the wallet holds the whole
 * lease; when it does not (Redis lost it, or is unreachable) it is PostgreSQL's: what settling the
 * lease now would return (`LeaseBook.openOwed`), less this pod's charges not written yet.
 */
import type { Logger } from '@uda/shared/logger';
import { ApiError } from '../../errors/api-error.ts';
import { ErrorCode } from '../../errors/codes.ts';
import { formatUsd } from '../../money.ts';
import type { Journal } from '../journal.ts';
import type { LeaseBook } from '../leases.ts';
import type { BalanceReadout } from '../types.ts';
import type { Buckets, Wallet } from '../wallet.ts';

interface BalanceParts {
  balanceMicro: number;
  grantMicro: number;
  topoffMicro: number;
  lease: LeaseCredit;
}

/** The open lease's unspent credit; `owed`: what of it returns to each bucket, when PostgreSQL told it. */
interface LeaseCredit {
  micro: number;
  owed?: { grantMicro: number; topoffMicro: number };
}

export interface BalancesOptions {
  readonly leases: LeaseBook;
  readonly wallet: Wallet;
  /** This pod's charges that PostgreSQL has not acknowledged (`Journal.unflushed`). */
  readonly journal: Journal;
  readonly logger?: Logger;
}

export class Balances {
  readonly #o: BalancesOptions;

  constructor(options: BalancesOptions) {
    this.#o = options;
  }

  /** The balance: buckets plus the open lease's unspent credit (its holds included: `Wallet.available`). */
  async balance(accountId: string): Promise<number> {
    return (await this.#parts(accountId)).balanceMicro;
  }

  /**
   * The balance a response reports when it charged nothing (a paid re-read): from the buckets the
   * wallet stored, as a spend reports them, so the request reads no PostgreSQL; undefined when none
   * are stored (or the wallet's store fails).
   */
  async stored(accountId: string): Promise<number | undefined> {
    return this.orWhileWalletFails(this.#o.wallet.storedBalance(accountId), undefined);
  }

  /**
   * The balance with its two buckets, for the readouts that show them (admin `account show`, the
   * dashboard's Usage page): each bucket plus the part of the lease's unspent credit that returns to
   * it (the lease spends its grant part first, so what is left is top-off first).
   */
  async readout(accountId: string): Promise<BalanceReadout> {
    const parts = await this.#parts(accountId);
    const unspent = parts.lease.micro;
    const lease = parts.lease.owed ?? (unspent ? await this.#o.leases.openParts(accountId) : undefined);
    const leasedTopoff = Math.min(unspent, lease?.topoffMicro ?? 0);
    return { balanceMicro: parts.balanceMicro, grantMicro: parts.grantMicro + unspent - leasedTopoff, topoffMicro: parts.topoffMicro + leasedTopoff };
  }

  /** The one definition of the balance, with its parts; the buckets go to the wallet for lookups to report. */
  async #parts(accountId: string): Promise<BalanceParts> {
    const [buckets, lease] = await Promise.all([this.#readBuckets(accountId), this.leaseCredit(accountId)]);
    return { balanceMicro: buckets.micro + lease.micro, grantMicro: buckets.grantMicro, topoffMicro: buckets.topoffMicro, lease };
  }

  /**
   * The open lease's unspent credit, its holds included: the wallet's while it holds the whole
   * lease (no PostgreSQL read); PostgreSQL's when it does not (lost with Redis, or Redis down).
   */
  async leaseCredit(accountId: string): Promise<LeaseCredit> {
    const fromWallet = await this.orWhileWalletFails(this.#o.wallet.available(accountId), undefined);
    if (fromWallet !== undefined) return { micro: fromWallet };
    const owed = await this.#o.leases.openOwed(accountId, (leaseId) => this.#o.journal.unflushed(accountId, leaseId));
    return owed ? { micro: owed.grantMicro + owed.topoffMicro, owed } : { micro: 0 };
  }

  /**
   * While the wallet's store fails (Redis down), reads of it answer `fallback`, so nothing that
   * needs only PostgreSQL fails with it (the balance then reads the lease from PostgreSQL).
   */
  async orWhileWalletFails<T>(call: Promise<T>, fallback: T): Promise<T> {
    try {
      return await call;
    } catch (err) {
      this.#o.logger?.warn({ err }, 'credit wallet unavailable');
      return fallback;
    }
  }

  /** Reads the buckets from PostgreSQL into the wallet, so lookups report them; returns them. */
  async refreshBuckets(accountId: string): Promise<number> {
    return (await this.#readBuckets(accountId)).micro;
  }

  async #readBuckets(accountId: string): Promise<Buckets & { grantMicro: number; topoffMicro: number }> {
    const buckets = await this.#o.leases.buckets(accountId);
    await this.orWhileWalletFails(this.#o.wallet.storeBuckets(accountId, { micro: buckets.micro, version: buckets.version }), undefined);
    return buckets;
  }
}

export function insufficientCredit(balanceMicro: number, costMicro: number): ApiError {
  return new ApiError(
    ErrorCode.INSUFFICIENT_CREDIT,
    { credits: { remainingMicro: balanceMicro, requestCostMicro: costMicro } },
    { 'X-Credit-Cost': '0', 'X-Credits-Remaining': formatUsd(balanceMicro) },
  );
}
