/**
 * Every read of the balance (headers, admin, the dashboard, the up-front 402) goes through here.
 * Before it reads (`balances.ts`), this pod's own moves of credit land: its queued hold releases
 * (a lookup's true charge) are sent, and its lease take of the account (credit moving from
 * PostgreSQL to Redis in two steps) is waited for, so a readout never sees half of a move.
 * Also the up-front 402's short-lived cache of positive balances (rule 4).
 */
import type { BalanceReadout, Payer } from '../types.ts';
import { type Balances, insufficientCredit } from './balances.ts';
import type { LeaseTakes } from './lease-takes.ts';
import type { ReleaseQueue } from './release-queue.ts';

/** A positive balance this pod saw is trusted this long by the up-front 402. */
const POSITIVE_BALANCE_TTL_MS = 2_000;
/** Past this many accounts the cache starts over, so it never grows without bound. */
const POSITIVE_BALANCE_MAX = 10_000;

export interface ReadoutsOptions {
  readonly balances: Balances;
  readonly releases: ReleaseQueue;
  readonly takes: LeaseTakes;
  readonly now: () => number;
}

export class Readouts {
  readonly #o: ReadoutsOptions;
  /** accountId → a positive balance this pod saw, for the up-front 402 only (`requireCredit`). */
  readonly #positive = new Map<string, { micro: number; at: number }>();

  constructor(options: ReadoutsOptions) {
    this.#o = options;
  }

  /** The balance (DECISIONS §3 "One balance"): buckets plus the open lease's unspent credit. */
  async balance(accountId: string): Promise<number> {
    await this.#landOwnMoves(accountId);
    return this.#o.balances.balance(accountId);
  }

  /** The balance with its two buckets (admin `account show`, the dashboard's Usage page). */
  async readout(accountId: string): Promise<BalanceReadout> {
    await this.#landOwnMoves(accountId);
    return this.#o.balances.readout(accountId);
  }

  /**
   * The balance a response reports when it charged nothing (a paid re-read): from the buckets the
   * wallet stored, as a spend reports them, so the request reads no PostgreSQL; read whole when
   * none are stored.
   */
  async reported(accountId: string): Promise<number> {
    return (await this.#o.balances.stored(accountId)) ?? this.balance(accountId);
  }

  /**
   * Rule 4: a request that would create a new charge needs a balance above zero. A positive balance
   * this pod saw in the last two seconds is trusted without a database read: at worst a request
   * does its work and then gets the 402 from the charge itself, which is always authoritative.
   */
  async requireCredit(payer: Payer): Promise<number> {
    const seen = this.#positive.get(payer.accountId);
    if (seen && this.#o.now() - seen.at < POSITIVE_BALANCE_TTL_MS) return seen.micro;
    const balance = await this.balance(payer.accountId);
    if (balance <= 0) throw insufficientCredit(balance, 0);
    this.remember(payer.accountId, balance);
    return balance;
  }

  /** Records a balance a charge reported: a positive one for the up-front 402, a zero one forgets it. */
  remember(accountId: string, micro: number): void {
    if (micro <= 0) return void this.#positive.delete(accountId);
    if (this.#positive.size >= POSITIVE_BALANCE_MAX) this.#positive.clear();
    this.#positive.set(accountId, { micro, at: this.#o.now() });
  }

  async #landOwnMoves(accountId: string): Promise<void> {
    await this.#o.releases.flushed();
    await this.#o.takes.settled(accountId);
  }
}
