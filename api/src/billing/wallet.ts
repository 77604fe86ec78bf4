/**
 * An account's wallet: the unspent part of its open credit lease (`leases.ts`), where lookups spend
 * without touching PostgreSQL. Shared by every API pod through Redis (`wallet-redis.ts`); the
 * embedded default keeps it in the process (`MemoryWallet`, below). Both follow the same rules:
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
  | { readonly ok: true; readonly leaseId: string; readonly unspentMicro: number; readonly heldMicro: number; readonly bucketsMicro: number | undefined }
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
  /** Adds a lease's new credit; opens the wallet on it when it holds no open lease. Stores the buckets too. */
  fund(accountId: string, leaseId: string, addMicro: number, buckets: Buckets): Promise<void>;
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
  /** The spendable credit plus the holds of the open lease: the wallet's part of the balance. */
  available(accountId: string): Promise<number>;
  /** The whole balance from the buckets the wallet stored (as a spend reports it); undefined when none are stored. */
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

/** Past this many remembered window keys, the memory wallet drops the expired ones. */
const REMEMBERED_KEYS_MAX = 100_000;

/** A remembered value (a window key's lease, a marker's charge key) and until when. */
interface Remembered {
  readonly value: string;
  readonly untilMs: number;
}

function remember(memory: Map<string, Remembered>, key: string, value: string, forMs: number): void {
  // Bounded: past this many keys the expired ones go (a day of one process's window charges).
  if (memory.size >= REMEMBERED_KEYS_MAX) for (const [k, entry] of memory) if (entry.untilMs <= Date.now()) memory.delete(k);
  memory.set(key, { value, untilMs: Date.now() + forMs });
}

function markerId(accountId: string, name: string): string {
  return `${accountId}\n${name}`;
}

interface MemoryAccount {
  leaseId?: string;
  open: boolean;
  unspentMicro: number;
  heldMicro: number;
  buckets?: Buckets;
}

/** The embedded default's wallet: one process, so plain maps. Same rules as the Redis wallet. */
export class MemoryWallet implements Wallet {
  readonly local = true;
  readonly #accounts = new Map<string, MemoryAccount>();
  /** Charge key → its hold (`<account>`, lease or '' once orphaned, amount, expiry). */
  readonly #holds = new Map<string, { accountId: string; leaseId: string; amountMicro: number; expiresAtMs: number }>();

  /** Window charge keys spent → their lease and until when they are remembered. */
  readonly #keys = new Map<string, Remembered>();
  /** Re-read markers (`markerId`) → the charge key and until when. */
  readonly #markers = new Map<string, Remembered>();

  #remembered(key: string): string | undefined {
    const entry = this.#keys.get(key);
    return entry && entry.untilMs > Date.now() ? entry.value : undefined;
  }


  #account(accountId: string): MemoryAccount {
    let account = this.#accounts.get(accountId);
    if (!account) this.#accounts.set(accountId, (account = { open: false, unspentMicro: 0, heldMicro: 0 }));
    return account;
  }

  async spend(accountId: string, record: ChargeRecord, rememberMs = 0, marker?: PaidMarker): Promise<SpendResult> {
    const a = this.#account(accountId);
    const bucketsMicro = a.buckets?.micro;
    const previous = rememberMs > 0 ? this.#remembered(record.key) : undefined;
    if (previous) return { ok: true, leaseId: previous, unspentMicro: a.open ? a.unspentMicro : 0, heldMicro: a.open ? a.heldMicro : 0, bucketsMicro, duplicate: true };
    if (!a.open || !a.leaseId || a.unspentMicro < record.amountMicro) return { ok: false, closedLeaseId: a.open ? undefined : a.leaseId };
    a.unspentMicro -= record.amountMicro;
    if (rememberMs > 0) remember(this.#keys, record.key, a.leaseId, rememberMs);
    if (marker) await this.markPaid(accountId, marker, record.key);
    return { ok: true, leaseId: a.leaseId, unspentMicro: a.unspentMicro, heldMicro: a.heldMicro, bucketsMicro, duplicate: false };
  }

  async fund(accountId: string, leaseId: string, addMicro: number, buckets: Buckets): Promise<void> {
    const a = this.#account(accountId);
    if (a.leaseId === leaseId) {
      if (a.open) a.unspentMicro += addMicro;
    } else {
      // The previous lease was settled, its holds orphaned first.
      Object.assign(a, { leaseId, open: true, unspentMicro: addMicro, heldMicro: 0 });
    }
    await this.storeBuckets(accountId, buckets);
  }

  async credit(accountId: string, leaseId: string, micro: number): Promise<void> {
    const a = this.#account(accountId);
    if (a.open && a.leaseId === leaseId) a.unspentMicro += micro;
  }

  async close(accountId: string, leaseId: string): Promise<void> {
    const a = this.#account(accountId);
    if (a.leaseId === leaseId) a.open = false;
  }

  async unspent(accountId: string): Promise<number> {
    const a = this.#accounts.get(accountId);
    return a?.open ? a.unspentMicro : 0;
  }

  async storeBuckets(accountId: string, buckets: Buckets): Promise<void> {
    const a = this.#account(accountId);
    if (!a.buckets || a.buckets.version < buckets.version) a.buckets = buckets;
  }

  async openLeases(): Promise<{ accountId: string; leaseId: string }[]> {
    return [...this.#accounts].flatMap(([accountId, a]) => (a.open && a.leaseId ? [{ accountId, leaseId: a.leaseId }] : []));
  }

  async paidMarker(accountId: string, name: string): Promise<string | undefined> {
    const entry = this.#markers.get(markerId(accountId, name));
    return entry && entry.untilMs > Date.now() ? entry.value : undefined;
  }

  async markPaid(accountId: string, marker: PaidMarker, chargeKey: string): Promise<void> {
    remember(this.#markers, markerId(accountId, marker.name), chargeKey, marker.ttlMs);
  }

  async forgetPaid(accountId: string, name: string): Promise<void> {
    this.#markers.delete(markerId(accountId, name));
  }

  async spent(accountId: string, key: string): Promise<boolean> {
    return this.#remembered(key) !== undefined;
  }

  async available(accountId: string): Promise<number> {
    const a = this.#accounts.get(accountId);
    return a?.open ? a.unspentMicro + a.heldMicro : 0;
  }

  async storedBalance(accountId: string): Promise<number | undefined> {
    const buckets = this.#accounts.get(accountId)?.buckets;
    return buckets && buckets.micro + (await this.available(accountId));
  }

  holdRider(): undefined {
    return undefined;
  }

  paidMarkerRider(): undefined {
    return undefined;
  }

  holdReply(): HoldResult {
    return { ok: false, leased: false };
  }

  async hold(accountId: string, hold: HoldRequest): Promise<HoldResult> {
    const a = this.#account(accountId);
    if (!a.open || !a.leaseId || a.unspentMicro < hold.amountMicro) return { ok: false, leased: a.open && Boolean(a.leaseId) };
    a.unspentMicro -= hold.amountMicro;
    a.heldMicro += hold.amountMicro;
    this.#holds.set(hold.key, { accountId, leaseId: a.leaseId, amountMicro: hold.amountMicro, expiresAtMs: hold.expiresAtMs });
    return { ok: true, leaseId: a.leaseId, unspentMicro: a.unspentMicro, heldMicro: a.heldMicro, bucketsMicro: a.buckets?.micro };
  }

  async release(releases: readonly Release[]): Promise<void> {
    for (const { record } of releases) this.#release(record);
  }

  /** The same steps as the Redis wallet's `release` (wallet-redis.ts). */
  #release(record: ChargeRecord): boolean {
    const hold = this.#holds.get(record.key);
    if (!hold) return false;
    this.#holds.delete(record.key);
    const a = this.#account(hold.accountId);
    if (a.leaseId !== hold.leaseId) return true;
    a.heldMicro -= hold.amountMicro;
    if (a.open) a.unspentMicro += hold.amountMicro - record.amountMicro;
    return true;
  }

  async reapHolds(nowMs: number): Promise<string[]> {
    const expired = [...this.#holds].filter(([, hold]) => hold.expiresAtMs <= nowMs).map(([key]) => key);
    return expired.filter((key) => this.#release({ key, amountMicro: 0 }));
  }

  async held(accountId: string, leaseId: string): Promise<number> {
    const a = this.#accounts.get(accountId);
    return a?.leaseId === leaseId ? a.heldMicro : 0;
  }

  async orphanHolds(accountId: string, leaseId: string): Promise<void> {
    for (const hold of this.#holds.values()) if (hold.accountId === accountId && hold.leaseId === leaseId) hold.leaseId = '';
    const a = this.#account(accountId);
    if (a.leaseId === leaseId) a.heldMicro = 0;
  }
}
