/**
 * The one balance (rule 7 in `index.ts`; DECISIONS §3 "One balance"): the buckets in PostgreSQL
 * plus the unspent credit of the open lease, and the short-lived cache of positive balances that
 * the up-front 402 trusts (rule 4). Every readout (headers, admin, the dashboard) goes through here.
 * The lease's unspent credit is the wallet's (one Redis read) while the wallet holds the whole
 * lease; when it does not (Redis lost it, or is unreachable) it is PostgreSQL's: what settling the
 * lease now would return (`LeaseBook.openOwed`), less this pod's charges not written yet.
 */
import type { Logger } from '@uda/shared/logger';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import { formatUsd } from '../money.ts';
import type { BalanceReadout, Payer } from './types.ts';
import type { LeaseBook } from './leases.ts';
import type { Buckets, Wallet } from './wallet.ts';

/** A positive balance this pod saw is trusted this long by the up-front 402. */
const POSITIVE_BALANCE_TTL_MS = 2_000;
/** Past this many accounts the cache starts over, so it never grows without bound. */
const POSITIVE_BALANCE_MAX = 10_000;

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

export class Balances {
  readonly #leases: LeaseBook;
  readonly #wallet: Wallet;
  readonly #logger: Logger | undefined;
  readonly #now: () => number;
  readonly #beforeRead: (accountId: string) => Promise<void>;
  readonly #unflushed: (accountId: string, leaseId: string) => number;
  /** accountId → a positive balance this pod saw, for the up-front 402 only (`requireCredit`). */
  readonly #positive = new Map<string, { micro: number; at: number }>();

  /** `unflushed`: what this pod charged under a lease that PostgreSQL has not acknowledged (its journal). */
  constructor(options: {
    leases: LeaseBook;
    wallet: Wallet;
    logger?: Logger;
    now: () => number;
    beforeRead?: (accountId: string) => Promise<void>;
    unflushed?: (accountId: string, leaseId: string) => number;
  }) {
    this.#beforeRead = options.beforeRead ?? (async () => {});
    this.#unflushed = options.unflushed ?? (() => 0);
    this.#leases = options.leases;
    this.#wallet = options.wallet;
    this.#logger = options.logger;
    this.#now = options.now;
  }

  /** The balance: buckets plus the open lease's unspent credit (its holds included: `Wallet.available`). */
  async balance(accountId: string): Promise<number> {
    return (await this.#parts(accountId)).balanceMicro;
  }

  /**
   * The balance a response reports when it charged nothing (a paid re-read): from the buckets the
   * wallet stored, as a spend reports them, so the request reads no PostgreSQL; from `balance` when
   * none are stored (or the wallet's store fails).
   */
  async reported(accountId: string): Promise<number> {
    const stored = await this.orWhileWalletFails(this.#wallet.storedBalance(accountId), undefined);
    return stored ?? this.balance(accountId);
  }

  /**
   * The balance with its two buckets, for the readouts that show them (admin `account show`, the
   * dashboard's Usage page): each bucket plus the part of the lease's unspent credit that returns to
   * it (the lease spends its grant part first, so what is left is top-off first).
   */
  async readout(accountId: string): Promise<BalanceReadout> {
    const parts = await this.#parts(accountId);
    const unspent = parts.lease.micro;
    const lease = parts.lease.owed ?? (unspent ? await this.#leases.openParts(accountId) : undefined);
    const leasedTopoff = Math.min(unspent, lease?.topoffMicro ?? 0);
    return { balanceMicro: parts.balanceMicro, grantMicro: parts.grantMicro + unspent - leasedTopoff, topoffMicro: parts.topoffMicro + leasedTopoff };
  }

  /** The one definition of the balance, with its parts; the buckets go to the wallet for lookups to report. */
  async #parts(accountId: string): Promise<BalanceParts> {
    // What this pod has reported but not yet written must be in the readout: its queued hold
    // releases (a lookup's true charge) are sent first, and its lease take of the account (credit
    // moving from PostgreSQL to Redis in two steps) is waited for.
    await this.#beforeRead(accountId);
    const [buckets, lease] = await Promise.all([this.#readBuckets(accountId), this.leaseCredit(accountId)]);
    return { balanceMicro: buckets.micro + lease.micro, grantMicro: buckets.grantMicro, topoffMicro: buckets.topoffMicro, lease };
  }

  /**
   * The open lease's unspent credit, its holds included: the wallet's while it holds the whole
   * lease (no PostgreSQL read); PostgreSQL's when it does not (lost with Redis, or Redis down).
   */
  async leaseCredit(accountId: string): Promise<LeaseCredit> {
    const fromWallet = await this.orWhileWalletFails(this.#wallet.available(accountId), undefined);
    if (fromWallet !== undefined) return { micro: fromWallet };
    const owed = await this.#leases.openOwed(accountId, (leaseId) => this.#unflushed(accountId, leaseId));
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
      this.#logger?.warn({ err }, 'credit wallet unavailable');
      return fallback;
    }
  }

  /** Reads the buckets from PostgreSQL into the wallet, so lookups report them; returns them. */
  async refreshBuckets(accountId: string): Promise<number> {
    return (await this.#readBuckets(accountId)).micro;
  }

  async #readBuckets(accountId: string): Promise<Buckets & { grantMicro: number; topoffMicro: number }> {
    const buckets = await this.#leases.buckets(accountId);
    await this.orWhileWalletFails(this.#wallet.storeBuckets(accountId, { micro: buckets.micro, version: buckets.version }), undefined);
    return buckets;
  }

  /**
   * Rule 4: a request that would create a new charge needs a balance above zero. A positive balance
   * this pod saw in the last two seconds is trusted without a database read: at worst a request
   * does its work and then gets the 402 from the charge itself, which is always authoritative.
   */
  async requireCredit(payer: Payer): Promise<number> {
    const seen = this.#positive.get(payer.accountId);
    if (seen && this.#now() - seen.at < POSITIVE_BALANCE_TTL_MS) return seen.micro;
    const balance = await this.balance(payer.accountId);
    if (balance <= 0) throw insufficientCredit(balance, 0);
    this.remember(payer.accountId, balance);
    return balance;
  }

  /** Records a balance a charge reported: a positive one for the up-front 402, a zero one forgets it. */
  remember(accountId: string, micro: number): void {
    if (micro <= 0) return void this.#positive.delete(accountId);
    if (this.#positive.size >= POSITIVE_BALANCE_MAX) this.#positive.clear();
    this.#positive.set(accountId, { micro, at: this.#now() });
  }
}

export function insufficientCredit(balanceMicro: number, costMicro: number): ApiError {
  return new ApiError(
    ErrorCode.INSUFFICIENT_CREDIT,
    { credits: { remainingMicro: balanceMicro, requestCostMicro: costMicro } },
    { 'X-Credit-Cost': '0', 'X-Credits-Remaining': formatUsd(balanceMicro) },
  );
}
