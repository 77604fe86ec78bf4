/**
 * Ranking in worker threads, one per core given: the in-memory ranking (`rank.ts`) is synchronous
 * CPU work, so on the main thread it used one core and held the event loop, and every lookup behind
 * it (HTTP, page reads, JSON) waited its turn. The threads read the versions' index arrays, which
 * live on SharedArrayBuffers (`search-index.ts`), without copying them; the main thread keeps HTTP
 * and the page reads and exchanges a small message per lookup (the terms in; the total and the
 * page's documents out).
 *
 * Each thread ranks one lookup at a time; the others wait in a FIFO queue here (`wait-queue.ts`),
 * bounded (a full queue refuses with QUERY_BACKEND_UNAVAILABLE, as the limiter does). A lookup keeps
 * its deadline across the hand-over: one still waiting when its deadline passes leaves the queue then
 * with QUERY_TIMEOUT, without being sent, and a thread gets the time left. A thread receives an index's arrays with its first
 * lookup on it, and drops them when the version is closed, so a version's memory is freed with it.
 */
import { Worker } from 'node:worker_threads';
import { DeadlineExceeded } from '@uda/shared/duckdb';
import { unavailableError } from '../errors.ts';
import { createWaitQueue } from '../wait-queue.ts';
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

/** A lookup to rank, as it waits for a thread. */
interface Task {
  readonly key: number;
  readonly index: SourceIndex;
  readonly query: ParsedQuery;
  readonly limit: number;
  readonly deadline: LookupDeadline;
}

/** The lookup a thread ranks now, and how its caller hears the answer. */
interface Running {
  readonly id: number;
  readonly timeoutMs: number;
  resolve(ranking: PageRanking): void;
  reject(error: unknown): void;
}

interface Thread {
  worker: Worker;
  /** The index keys this thread has been sent and not told to drop. */
  readonly holds: Set<number>;
  running: Running | undefined;
}

/** What a waiting lookup is handed: its answer from the thread it was sent to (boxed, so the wait does not adopt it). */
interface Sent {
  readonly reply: Promise<PageRanking>;
}

const newWorker = () => new Worker(new URL('./rank-worker.ts', import.meta.url));
const queueFullError = () => unavailableError('Every lookup slot of the query service is taken; retry shortly.', 1);
const stoppedError = () => unavailableError('The query service is shutting down.', 1);
const noThreadError = () => new Error('no ranking thread could start');

/**
 * Each index object gets a key the threads know it by; once its version closes, the threads that
 * hold it are told to drop it.
 */
function indexKeys(pool: readonly Thread[]) {
  const keys = new WeakMap<SourceIndex, number>();
  const held = new Set<number>();
  let nextKey = 1;
  const drop = (key: number) => {
    held.delete(key);
    for (const thread of pool) {
      if (thread.holds.delete(key)) thread.worker.postMessage({ kind: 'drop', key } satisfies ToRankThread);
    }
  };
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
  return { keyOf, held };
}

/** Sends `task` to `thread` (with the index's arrays the first time); the promise is the thread's answer. */
function sendTo(thread: Thread, task: Task, id: number): Promise<PageRanking> {
  return new Promise<PageRanking>((resolve, reject) => {
    thread.running = { id, timeoutMs: task.deadline.timeoutMs, resolve, reject };
    const first = !thread.holds.has(task.key);
    thread.holds.add(task.key);
    const remainingMs = task.deadline.expiresAt - performance.now();
    thread.worker.postMessage({
      kind: 'rank', task: id, key: task.key, index: first ? task.index : undefined, query: task.query, limit: task.limit, remainingMs,
    } satisfies ToRankThread);
  });
}

/** Settles the thread's running lookup with its reply; true: the thread is now free. */
function answer(thread: Thread, reply: RankReply): boolean {
  const running = thread.running;
  if (!running || running.id !== reply.task) return false;
  thread.running = undefined;
  if ('total' in reply) running.resolve({ total: reply.total, docs: reply.docs });
  else if ('timedOut' in reply) running.reject(new DeadlineExceeded(running.timeoutMs));
  else running.reject(new Error(reply.failed));
  return true;
}

interface Watcher {
  /** The thread is free to take the next lookup. */
  freed(thread: Thread): void;
  /** The thread's worker never came online (its code did not load): it is gone for good. */
  lost(thread: Thread): void;
  closing(): boolean;
}

/**
 * Follows `thread`'s worker. A worker that stops after it came online (it should not: the ranking
 * catches its own errors) fails its lookup and is replaced; one that never came online is not.
 */
function watch(thread: Thread, watcher: Watcher): void {
  const { worker } = thread;
  let online = false;
  worker.on('online', () => (online = true));
  worker.on('message', (reply: RankReply) => {
    if (answer(thread, reply)) watcher.freed(thread);
  });
  // The 'exit' that follows an error is what the pool acts on.
  worker.on('error', () => {});
  worker.on('exit', () => {
    thread.running?.reject(watcher.closing() ? stoppedError() : new Error('a ranking thread stopped'));
    thread.running = undefined;
    if (watcher.closing()) return;
    if (!online) return watcher.lost(thread);
    thread.worker = newWorker();
    thread.holds.clear();
    watch(thread, watcher);
    watcher.freed(thread);
  });
}

export function createRankPool(threads: number, maxQueued: number): RankPool {
  const pool: Thread[] = [];
  const { keyOf, held } = indexKeys(pool);
  const queue = createWaitQueue<Task, Sent>({ timedOut: (task) => new DeadlineExceeded(task.deadline.timeoutMs), stopped: stoppedError });
  let nextTask = 1;
  let closing = false;
  const send = (thread: Thread, task: Task): Sent => ({ reply: sendTo(thread, task, nextTask++) });
  const watcher: Watcher = {
    freed: (thread) => void queue.serve((task) => send(thread, task)),
    lost(thread) {
      pool.splice(pool.indexOf(thread), 1);
      // Once no thread is left, the lookups fail instead of waiting.
      if (pool.length === 0) queue.refuseAll(noThreadError());
    },
    closing: () => closing,
  };
  for (let i = 0; i < threads; i++) {
    const thread: Thread = { worker: newWorker(), holds: new Set(), running: undefined };
    pool.push(thread);
    watch(thread, watcher);
  }

  const enqueue = async (task: Task): Promise<PageRanking> => {
    const idle = pool.find((thread) => thread.running === undefined);
    const { reply } = idle ? send(idle, task) : await queue.wait(task, { timeoutMs: task.deadline.expiresAt - performance.now() });
    return reply;
  };

  return {
    threads,
    get heldIndexes() {
      return held.size;
    },
    async rank(indexes, source, query, limit, deadline) {
      const index = indexes.get(source);
      if (!index) throw unavailableError(`The ${source} source has no search index in the current data version.`);
      if (closing) throw stoppedError();
      if (pool.length === 0) throw noThreadError();
      if (queue.waiting.length >= maxQueued) throw queueFullError();
      return enqueue({ key: keyOf(indexes, index), index, query, limit, deadline });
    },
    async close() {
      closing = true;
      queue.refuseAll(stoppedError());
      await Promise.all(pool.map((thread) => thread.worker.terminate()));
    },
  };
}
