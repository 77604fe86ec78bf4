/**
 * Settling credit leases (rule 7 in the billing door) and writing this pod's journal to the ledger
 * (`journal.ts`: the charges live in the pod until PostgreSQL has them, never only in Redis).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Journal } from '../journal.ts';
import type { LeaseBook } from '../leases.ts';
import type { Wallet } from '../wallet.ts';
import type { Balances } from './balances.ts';
import type { ReleaseQueue } from './release-queue.ts';

/** How often a settlement looks whether its lease's holds were released. */
const HOLD_WAIT_STEP_MS = 25;

export interface LeaseSettlementsOptions {
  readonly wallet: Wallet;
  readonly leases: LeaseBook;
  readonly journal: Journal;
  readonly balances: Balances;
  readonly releases: ReleaseQueue;
  /** How long a settlement waits for the lease's holds to be released before it orphans them. */
  readonly holdWaitMs: number;
  readonly now: () => number;
}

export class LeaseSettlements {
  readonly #o: LeaseSettlementsOptions;

  constructor(options: LeaseSettlementsOptions) {
    this.#o = options;
  }

  /** Settles the account's open lease now, if it has one. */
  async settleOpenLease(accountId: string): Promise<void> {
    const leaseId = await this.#o.leases.open(accountId);
    if (leaseId) await this.settleLease(accountId, leaseId);
  }

  /**
   * Settles a lease (rule 7): closes its wallet so nothing more is spent on it, writes this pod's
   * journal, then returns the unspent credit in one transaction. Any pod may settle any lease, any
   * number of times; another pod's charges that arrive after it are charged on the buckets
   * (`journal.ts`). A wallet lost with Redis cannot be closed: the ledger alone decides.
   */
  async settleLease(accountId: string, leaseId: string): Promise<void> {
    await this.#o.wallet.close(accountId, leaseId);
    await this.#endHolds(accountId, leaseId);
    await this.flush();
    const settled = await this.#o.leases.settle(leaseId);
    if (settled) await this.#o.wallet.storeBuckets(accountId, settled.buckets);
  }

  /**
   * Before a closed lease's log is counted, its holds' releases should be in it: this pod sends its
   * own, and every pod's flush sends theirs within 250 ms. Holds still there after `holdWaitMs`
   * (their pod died, or their request is slow) are orphaned: their release then charges the next
   * open lease, or is forgiven (`wallet.ts`).
   */
  async #endHolds(accountId: string, leaseId: string): Promise<void> {
    const { wallet, releases, holdWaitMs } = this.#o;
    for (const until = this.#o.now() + holdWaitMs, started = Date.now(); ; ) {
      await releases.send();
      if ((await wallet.held(accountId, leaseId)) === 0) return;
      // Either clock may be a test's: the wait ends on whichever passes first.
      if (this.#o.now() >= until || Date.now() - started >= holdWaitMs) break;
      await sleep(HOLD_WAIT_STEP_MS);
    }
    await wallet.orphanHolds(accountId, leaseId);
  }

  /** Settles every lease past its expiry, whichever pod took it; returns the failures, each lease on its own. */
  async settleExpired(): Promise<unknown[]> {
    // One account whose flush lock a dead pod still holds (until the lock lapses) must not hold back
    // every other lease: each settles on its own, and the failures are reported after the pass.
    const failures: unknown[] = [];
    for (const lease of await this.#o.leases.expired()) await this.settleLease(lease.accountId, lease.leaseId).catch((error: unknown) => failures.push(error));
    return failures;
  }

  /** Settles the leases of a wallet that lives in this process (a Redis wallet's leases stay for the other pods). */
  async settleLocal(): Promise<void> {
    if (!this.#o.wallet.local) return;
    for (const lease of await this.#o.wallet.openLeases()) await this.settleLease(lease.accountId, lease.leaseId);
  }

  /** Writes this pod's journal to the ledger; the buckets a late charge moved are read again. */
  async flush(): Promise<void> {
    for (const accountId of await this.#o.journal.flush()) await this.#o.balances.refreshBuckets(accountId);
  }
}
