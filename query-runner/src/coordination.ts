/**
 * The two things runners share (DECISIONS §6): a lock per query id, and the index of stored
 * results. Redis in a cluster; in-process maps for the embedded single-runner default.
 */
import type { ResultMeta } from '@uda/shared/runner-contract';

export interface HeldLock {
  /** Idempotent; a lock that already expired is left alone, never someone else's deleted. */
  release(): Promise<void>;
}

export type LockAttempt = { acquired: true; lock: HeldLock } | { acquired: false; retryAfterMs: number };

export interface QueryLocks {
  acquire(queryId: string, ttlMs: number): Promise<LockAttempt>;
}

export interface ResultIndex {
  get(queryId: string): Promise<ResultMeta | undefined>;
  /** Stores a new entry that expires at `meta.expiresAt`. */
  put(meta: ResultMeta): Promise<void>;
  /** Replaces an existing entry without extending its life; a missing entry stays missing. */
  update(meta: ResultMeta): Promise<void>;
}

export interface Coordination {
  readonly locks: QueryLocks;
  readonly index: ResultIndex;
  readonly description: string;
  close(): Promise<void>;
}
