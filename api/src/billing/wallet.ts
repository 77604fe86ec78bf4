/**
 * An account's wallet: the unspent part of its open credit lease (`leases.ts`), where lookups spend
 * without touching PostgreSQL. Shared by every API pod through Redis (`wallet-redis.ts`); the
 * embedded default keeps it in the process (`MemoryWallet`, below). Both follow the same rules:
 *
 * - `spend` is atomic: it checks the wallet is open and covers the cost, takes the cost, and
 *   appends the charge record to the account's pending log, in one step, idempotent on the key.
 * - `flush` hands the pending log to a writer under a per-account lock and removes exactly the
 *   records it handed over once the writer returns, so two flushers never trim each other's work.
 * - `unspend` takes back a record that is still pending (the lookup's response never went out) and
 *   returns its amount to the wallet; once a record may be in PostgreSQL it says so instead.
 * - `close` stops all spending on a lease, before its settlement counts what was spent.
 * - The wallet also keeps the account's bucket balance as PostgreSQL last reported it, with its
 *   version, so a spend answers the exact remaining balance in the same step.
 */
import type { BreakdownItem, Buckets } from './types.ts';

export type { Buckets } from './types.ts';

/** One lookup's charge, spent from a wallet and written to the ledger by a flush. */
export interface ChargeRecord {
  readonly key: string;
  readonly amountMicro: number;
  readonly breakdown?: readonly BreakdownItem[];
  readonly requestId?: string;
  readonly queryId?: string;
}

export interface PendingCharge extends ChargeRecord {
  readonly accountId: string;
  readonly leaseId: string;
}

export type SpendResult =
  /** Spent (or already spent under this key: `duplicate`). `bucketsMicro` undefined: not cached. */
  | { readonly ok: true; readonly leaseId: string; readonly unspentMicro: number; readonly bucketsMicro: number | undefined; readonly duplicate: boolean }
  /** Not spent: no wallet, a closed one (`closedLeaseId`: settle it first), or too little in it. */
  | { readonly ok: false; readonly closedLeaseId: string | undefined };

/** `unspend`: the amount put back, or where the record is instead. */
export type UnspendResult = number | 'flushing' | 'written';

export interface Wallet {
  /** True when the wallet lives in this process only: a drain must settle its leases. */
  readonly local: boolean;
  spend(accountId: string, record: ChargeRecord): Promise<SpendResult>;
  /** Adds a lease's new credit; opens the wallet on it when it holds no open lease. Stores the buckets too. */
  fund(accountId: string, leaseId: string, addMicro: number, buckets: Buckets): Promise<void>;
  /** Returns a refunded charge's amount to the wallet, if the lease is still the open one. */
  credit(accountId: string, leaseId: string, micro: number): Promise<void>;
  unspend(accountId: string, key: string): Promise<UnspendResult>;
  /** No more spending on `leaseId`. */
  close(accountId: string, leaseId: string): Promise<void>;
  /** The open lease's unspent credit (0 without one). */
  unspent(accountId: string): Promise<number>;
  /** Stores the buckets unless a newer version is stored already. */
  storeBuckets(accountId: string, buckets: Buckets): Promise<void>;
  /**
   * Hands the account's pending records to `write` under the account's flush lock, then removes
   * them. False when another flusher holds the lock (nothing was done).
   */
  flush(accountId: string, write: (records: PendingCharge[]) => Promise<void>): Promise<boolean>;
  /** Accounts that may have pending records. */
  pendingAccounts(): Promise<string[]>;
  /** Accounts whose wallet is open (for a drain of a local wallet). */
  openLeases(): Promise<{ accountId: string; leaseId: string }[]>;
}

interface MemoryAccount {
  leaseId?: string;
  open: boolean;
  unspentMicro: number;
  buckets?: Buckets;
  readonly pending: Map<string, PendingCharge>;
  flushing: boolean;
}

/** The embedded default's wallet: one process, so plain maps. Same rules as the Redis wallet. */
export class MemoryWallet implements Wallet {
  readonly local = true;
  readonly #accounts = new Map<string, MemoryAccount>();

  #account(accountId: string): MemoryAccount {
    let account = this.#accounts.get(accountId);
    if (!account) this.#accounts.set(accountId, (account = { open: false, unspentMicro: 0, pending: new Map(), flushing: false }));
    return account;
  }

  async spend(accountId: string, record: ChargeRecord): Promise<SpendResult> {
    const a = this.#account(accountId);
    const bucketsMicro = a.buckets?.micro;
    const previous = a.pending.get(record.key);
    if (previous) return { ok: true, leaseId: previous.leaseId, unspentMicro: a.open ? a.unspentMicro : 0, bucketsMicro, duplicate: true };
    if (!a.open || !a.leaseId || a.unspentMicro < record.amountMicro) return { ok: false, closedLeaseId: a.open ? undefined : a.leaseId };
    a.unspentMicro -= record.amountMicro;
    a.pending.set(record.key, { ...record, accountId, leaseId: a.leaseId });
    return { ok: true, leaseId: a.leaseId, unspentMicro: a.unspentMicro, bucketsMicro, duplicate: false };
  }

  async fund(accountId: string, leaseId: string, addMicro: number, buckets: Buckets): Promise<void> {
    const a = this.#account(accountId);
    if (a.leaseId === leaseId) {
      if (a.open) a.unspentMicro += addMicro;
    } else {
      Object.assign(a, { leaseId, open: true, unspentMicro: addMicro });
    }
    await this.storeBuckets(accountId, buckets);
  }

  async credit(accountId: string, leaseId: string, micro: number): Promise<void> {
    const a = this.#account(accountId);
    if (a.open && a.leaseId === leaseId) a.unspentMicro += micro;
  }

  async unspend(accountId: string, key: string): Promise<UnspendResult> {
    const a = this.#account(accountId);
    if (a.flushing) return 'flushing';
    const record = a.pending.get(key);
    if (!record) return 'written';
    a.pending.delete(key);
    await this.credit(accountId, record.leaseId, record.amountMicro);
    return record.amountMicro;
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

  async flush(accountId: string, write: (records: PendingCharge[]) => Promise<void>): Promise<boolean> {
    const a = this.#account(accountId);
    if (a.flushing) return false;
    a.flushing = true;
    try {
      const records = [...a.pending.values()];
      if (records.length) await write(records);
      for (const record of records) a.pending.delete(record.key);
      return true;
    } finally {
      a.flushing = false;
    }
  }

  async pendingAccounts(): Promise<string[]> {
    return [...this.#accounts].filter(([, a]) => a.pending.size > 0).map(([id]) => id);
  }

  async openLeases(): Promise<{ accountId: string; leaseId: string }[]> {
    return [...this.#accounts].flatMap(([accountId, a]) => (a.open && a.leaseId ? [{ accountId, leaseId: a.leaseId }] : []));
  }
}
