/**
 * An account's wallet: the unspent part of its open credit lease (`leases.ts`), where lookups spend
 * without touching PostgreSQL. Shared by every API pod through Redis (`wallet-redis.ts`); the
 * embedded default keeps it in the process (`MemoryWallet`, `wallet-memory.ts`). Both follow the same rules:
 *
 * - The wallet holds no charge record: the pod that reports a charge keeps it in its journal
 *   (`journal.ts`) until PostgreSQL has it, so a wallet lost with Redis loses no charge
 *   (DECISIONS §3 "Money survives any single fault"). Everything here is rebuilt from PostgreSQL.
 * - `spend` is atomic: it checks the wallet is open and covers the cost and takes the cost, in one
 *   step, and answers the lease it spent from. A lookup's key is new every time; a window's key (a
 *   SQL result's, an export file's) is asked for again by later requests, so it is remembered for
 *   `rememberMs` after the spend: a key spent once is never spent twice while Redis remembers it.
 * - `close` stops all spending on a lease, before its settlement counts what was spent.
 * - The wallet also keeps the account's bucket balance as PostgreSQL last reported it, with its
 *   version, so a spend answers the exact remaining balance in the same step.
 * - A lookup may `hold` its largest possible cost before it knows its rows (DECISIONS §3 "Holds"):
 *   the hold leaves the spendable credit and is counted apart (`held`), still part of the balance.
 *   A `release` ends it with the true charge: the difference goes back to the spendable credit,
 *   atomically and once (a release of a hold that is gone does nothing, so a release may be sent
 *   twice); the charge itself is in the pod's journal under the hold's lease. A hold whose pod died
 *   expires and is reaped (`reapHolds`) as a release of nothing (its charge died with the pod's
 *   journal). Settling a lease first waits a moment for its holds, then `orphanHolds`: a later
 *   release of such a hold moves no credit (its charge reaches the ledger late, on the buckets).
 * - A wallet knows whether it holds the whole of its lease. One that Redis lost holds nothing of it;
 *   one funded anew by a later part of a lease it lost (a take extends the open lease) holds only
 *   the parts since. Either way the lease's unspent credit is PostgreSQL's to tell (`available`
 *   answers undefined, a spend or hold `whole: false`), until the lease settles and the next one is
 *   funded from its first part.
 */
import type { TakeRider } from '../limiter/types.ts';
import type { BeginPart, PaidMarkerRider } from './reread-rider.ts';
import type { Buckets, ChargeRecord } from './types.ts';

export type { Buckets, ChargeRecord, PendingCharge } from './types.ts';

export type SpendResult =
  /** Spent (or already spent under this window key: `duplicate`). `bucketsMicro` undefined: not cached. */
  | {
      readonly ok: true;
      readonly leaseId: string;
      readonly unspentMicro: number;
      /** The open lease's holds (`hold`): part of the balance, not spendable. */
      readonly heldMicro: number;
      readonly bucketsMicro: number | undefined;
      readonly duplicate: boolean;
      /** The wallet holds the whole lease; false: part of it was lost with Redis (the balance is PostgreSQL's to tell). */
      readonly whole: boolean;
    }
  /** Not spent: no wallet, a closed one (`closedLeaseId`: settle it first), or too little in it. */
  | { readonly ok: false; readonly closedLeaseId: string | undefined };

/**
 * A re-read marker (DECISIONS §3 "re-read marker"): names a result of one account (`name`, the
 * query's id) whose window is paid, for `ttlMs` (the paid window). Its value is the charge key.
 */
export interface PaidMarker {
  readonly name: string;
  readonly ttlMs: number;
}

/** A hold's request: the key its charge will have, the most it can cost, when it expires if never released. */
export interface HoldRequest {
  readonly key: string;
  readonly amountMicro: number;
  readonly expiresAtMs: number;
}

export type HoldResult =
  /** Held. `unspentMicro` + `heldMicro` (this hold included) + `bucketsMicro` is the balance before this request's charge. */
  | { readonly ok: true; readonly leaseId: string; readonly unspentMicro: number; readonly heldMicro: number; readonly bucketsMicro: number | undefined; readonly whole: boolean }
  /** Not held; `leased`: the wallet has an open lease (it was short, not empty of any lease). */
  | { readonly ok: false; readonly leased: boolean };

/** The end of a hold: `record` is the true charge (amount 0: the request failed, nothing charged). */
export interface Release {
  readonly accountId: string;
  readonly record: ChargeRecord;
}

export interface Wallet {
  /** True when the wallet lives in this process only: a drain must settle its leases. */
  readonly local: boolean;
  /** With `marker`: a fresh spend also sets that re-read marker to the record's key, in the same step. */
  spend(accountId: string, record: ChargeRecord, rememberMs?: number, marker?: PaidMarker): Promise<SpendResult>;
  /**
   * Adds a lease's new credit, its part number `part` (0: the lease's first); opens the wallet on
   * the lease when it holds another or none, whole only from the first part. Stores the buckets too.
   */
  fund(accountId: string, leaseId: string, addMicro: number, buckets: Buckets, part: number): Promise<void>;
  /** Returns a refunded charge's amount to the wallet, if the lease is still the open one. */
  credit(accountId: string, leaseId: string, micro: number): Promise<void>;
  /** No more spending on `leaseId`. */
  close(accountId: string, leaseId: string): Promise<void>;
  /** The open lease's unspent credit (0 without one). */
  unspent(accountId: string): Promise<number>;
  /** Stores the buckets unless a newer version is stored already. */
  storeBuckets(accountId: string, buckets: Buckets): Promise<void>;
  /** Accounts whose wallet is open (for a drain of a local wallet). */
  openLeases(): Promise<{ accountId: string; leaseId: string }[]>;
  /** The charge key a live re-read marker names; undefined when there is none (never set, expired, forgotten or lost). */
  paidMarker(accountId: string, name: string): Promise<string | undefined>;
  /** `paidMarker` as a rider of a counter call (reply: the charge key, '' for none); undefined: read it alone. */
  paidMarkerRider(accountId: string, name: string, begin?: BeginPart): PaidMarkerRider | undefined;
  /** Sets a re-read marker without a spend (a result that costs nothing). */
  markPaid(accountId: string, marker: PaidMarker, chargeKey: string): Promise<void>;
  /** Removes a re-read marker (its charge is being refunded). */
  forgetPaid(accountId: string, name: string): Promise<void>;
  /** Whether the window key `key` was spent (remembered for `rememberMs` after its spend). */
  spent(accountId: string, key: string): Promise<boolean>;
  /**
   * The spendable credit plus the holds of the open lease: the wallet's part of the balance (0 once
   * closed). Undefined when the wallet does not hold the whole lease (none, or lost with Redis).
   */
  available(accountId: string): Promise<number | undefined>;
  /** The whole balance from the buckets the wallet stored (as a spend reports it); undefined when none are stored or the wallet is not whole. */
  storedBalance(accountId: string): Promise<number | undefined>;
  /**
   * The hold and the releases as a rider of the request's counter call (one round trip for both);
   * undefined for a wallet in this process, which holds with `hold` instead.
   */
  holdRider(accountId: string, hold: HoldRequest, releases: readonly Release[]): TakeRider | undefined;
  /** The rider's reply: the hold's result. */
  holdReply(reply: unknown): HoldResult;
  hold(accountId: string, hold: HoldRequest): Promise<HoldResult>;
  /** Ends holds: each returns what it held beyond its charge to the spendable credit (its lease still the open one). */
  release(releases: readonly Release[]): Promise<void>;
  /** Releases, as charging nothing, the holds that expired (their pod died); returns their keys. */
  reapHolds(nowMs: number): Promise<string[]>;
  /** What the holds under `leaseId` still hold. */
  held(accountId: string, leaseId: string): Promise<number>;
  /** Detaches the holds still under `leaseId` from it, before it is settled. */
  orphanHolds(accountId: string, leaseId: string): Promise<void>;
}
