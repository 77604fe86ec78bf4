/**
 * Ranking in worker threads, one per core given: the in-memory ranking (`rank.ts`) is synchronous
 * CPU work, so on the main thread it used one core and held the event loop, and every lookup behind
 * it (HTTP, page reads, JSON) waited its turn. The threads read the versions' index arrays, which
 * live on SharedArrayBuffers (`search-index.ts`), without copying them; the main thread keeps HTTP
 * and the page reads and exchanges a small message per lookup (the terms in; the total and the
 * page's documents out).
 *
 * Each thread ranks one lookup at a time; the others wait in a FIFO queue here, bounded (a full
 * queue refuses with QUERY_BACKEND_UNAVAILABLE, as the limiter does). A lookup keeps its deadline
 * across the hand-over: a thread gets the time left, and a lookup out of time before a thread takes
 * it fails with QUERY_TIMEOUT without being sent. A thread receives an index's arrays with its first
 * lookup on it, and drops them when the version is closed, so a version's memory is freed with it.
 */
import { Worker } from 'node:worker_threads';
import { DeadlineExceeded } from '@uda/shared/duckdb';
import { unavailableError } from '../errors.ts';
import type { SourceIndex, StoredLookupSource } from '@uda/search/index';
import type { ParsedQuery } from '@uda/search/query';
import type { SearchIndexes } from './search-index.ts';

/** To a thread: a lookup to rank (with the index's arrays the first time), or an index to drop. */
export type ToRankThread =
  | { kind: 'rank'; task: number; key: number; index?: SourceIndex; query: ParsedQuery; limit: number; remainingMs: number }
  | { kind: 'drop'; key: number };

export type RankReply =
  | { task: number; total: number; docs: number[] }
  | { task: number; timedOut: true }
  | { task: number; failed: string };

/** The ranked page as document ids, and the total. */
export interface PageRanking {
  readonly total: number;
  readonly docs: readonly number[];
}

/** A lookup's deadline: `expiresAt` on this thread's `performance.now()` clock. */
export interface LookupDeadline {
  readonly expiresAt: number;
  readonly timeoutMs: number;
}

export interface RankPool {
  readonly threads: number;
  rank(indexes: SearchIndexes, source: StoredLookupSource, query: ParsedQuery, limit: number, deadline: LookupDeadline): Promise<PageRanking>;
  /** Indexes some thread holds (for the version swap's check that a closed version is dropped). */
  readonly heldIndexes: number;
  /** Refuses the queued lookups, then stops the threads (the runner first waits for lookups to end). */
  close(): Promise<void>;
}

interface Task {
  readonly id: number;
  readonly key: number;
  readonly index: SourceIndex;
  readonly query: ParsedQuery;
  readonly limit: number;
  readonly deadline: LookupDeadline;
  resolve(ranking: PageRanking): void;
  reject(error: unknown): void;
}

interface Thread {
  worker: Worker;
  /** The index keys this thread has been sent and not told to drop. */
  readonly holds: Set<number>;
  task: Task | undefined;
}

const newWorker = () => new Worker(new URL('./rank-worker.ts', import.meta.url));
const queueFullError = () => unavailableError('Every lookup slot of the query service is taken; retry shortly.', 1);
const stoppedError = () => unavailableError('The query service is shutting down.', 1);

export function createRankPool(threads: number, maxQueued: number): RankPool {
  const pool: Thread[] = [];
  const queue: Task[] = [];
  const keys = new WeakMap<SourceIndex, number>();
  const held = new Set<number>();
  let nextKey = 1;
  let nextTask = 1;
  let closing = false;

  const keyOf = (indexes: SearchIndexes, index: SourceIndex) => {
    let key = keys.get(index);
    if (key === undefined) {
      const k = (key = nextKey++);
      keys.set(index, k);
      held.add(k);
      indexes.onClose(() => drop(k));
    }
    return key;
  };

  const drop = (key: number) => {
    held.delete(key);
    for (const thread of pool) {
      if (thread.holds.delete(key)) thread.worker.postMessage({ kind: 'drop', key } satisfies ToRankThread);
    }
  };

  const settle = (thread: Thread, reply: RankReply) => {
    const task = thread.task;
    thread.task = undefined;
    if (task && task.id === reply.task) {
      if ('total' in reply) task.resolve({ total: reply.total, docs: reply.docs });
      else if ('timedOut' in reply) task.reject(new DeadlineExceeded(task.deadline.timeoutMs));
      else task.reject(new Error(reply.failed));
    }
    dispatch();
  };

  /**
   * Follows `thread`'s worker. A worker that stops after it came online (it should not: the ranking
   * catches its own errors) fails its lookup and is replaced; one that never came online (its code
   * did not load) is not, and once no thread is left the lookups fail instead of waiting.
   */
  const watch = (thread: Thread) => {
    const { worker } = thread;
    let online = false;
    worker.on('online', () => (online = true));
    worker.on('message', (reply: RankReply) => settle(thread, reply));
    // The 'exit' that follows an error is what the pool acts on.
    worker.on('error', () => {});
    worker.on('exit', () => {
      thread.task?.reject(closing ? stoppedError() : new Error('a ranking thread stopped'));
      thread.task = undefined;
      if (closing) return;
      if (online) {
        thread.worker = newWorker();
        thread.holds.clear();
        watch(thread);
      } else pool.splice(pool.indexOf(thread), 1);
      dispatch();
    });
  };

  const send = (thread: Thread, task: Task) => {
    thread.task = task;
    const first = !thread.holds.has(task.key);
    thread.holds.add(task.key);
    const remainingMs = task.deadline.expiresAt - performance.now();
    thread.worker.postMessage({
      kind: 'rank', task: task.id, key: task.key, index: first ? task.index : undefined, query: task.query, limit: task.limit, remainingMs,
    } satisfies ToRankThread);
  };

  function dispatch(): void {
    if (pool.length === 0) for (const task of queue.splice(0)) task.reject(new Error('no ranking thread could start'));
    for (const thread of pool) {
      if (thread.task) continue;
      let task = queue.shift();
      // Out of time while waiting: refused here, not sent.
      while (task && performance.now() >= task.deadline.expiresAt) {
        task.reject(new DeadlineExceeded(task.deadline.timeoutMs));
        task = queue.shift();
      }
      if (!task) return;
      send(thread, task);
    }
  }

  for (let i = 0; i < threads; i++) {
    const thread: Thread = { worker: newWorker(), holds: new Set(), task: undefined };
    pool.push(thread);
    watch(thread);
  }

  return {
    threads,
    get heldIndexes() {
      return held.size;
    },
    rank(indexes, source, query, limit, deadline) {
      const index = indexes.get(source);
      if (!index) return Promise.reject(unavailableError(`The ${source} source has no search index in the current data version.`));
      if (closing) return Promise.reject(stoppedError());
      if (pool.length === 0) return Promise.reject(new Error('no ranking thread could start'));
      if (queue.length >= maxQueued) return Promise.reject(queueFullError());
      return new Promise<PageRanking>((resolve, reject) => {
        queue.push({ id: nextTask++, key: keyOf(indexes, index), index, query, limit, deadline, resolve, reject });
        dispatch();
      });
    },
    async close() {
      closing = true;
      for (const task of queue.splice(0)) task.reject(stoppedError());
      await Promise.all(pool.map((thread) => thread.worker.terminate()));
    },
  };
}
