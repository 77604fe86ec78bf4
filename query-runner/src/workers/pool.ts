/**
 * The hard deadline and the memory cap. User SQL runs in a small pool of worker
 * processes; DuckDB's `interrupt()` ends most queries at the deadline inside the worker, and what
 * it cannot interrupt (one huge scalar call: `repeat('x', 4e9)`, a quadratic `levenshtein`) the
 * runner ends by killing the worker: at the deadline plus a short grace, or as soon as the
 * worker's resident memory passes the ceiling. A killed worker is replaced at once. One runaway
 * costs only its own query: other queries run in other workers, and the runner process itself
 * never executes user SQL. One tenant (caller) runs on at most half the workers, so even many
 * runaways from one caller leave workers for everyone else; its other queries wait their turn.
 * The turn is fair (`fair-turns.ts`): a freed worker goes to the waiting query whose tenant holds
 * the fewest workers, then the one served longest ago, then the oldest; a wait ends at its `waitUntil` (503, retry), and a query whose caller
 * stopped waiting (`signal`) leaves the queue, or has its worker killed when it already runs.
 */
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { Logger } from '@uda/shared/logger';
import { RunnerError, timeoutError, unavailableError } from '../errors.ts';
import type { SandboxLimits } from '../sandbox.ts';
import type { TaskMessage, WorkerMessage, WorkerOutcome } from './protocol.ts';
import { createFairTurns } from '../fair-turns.ts';

export interface PoolOptions {
  /** Workers at most; more queries wait for one to be free. */
  readonly size: number;
  readonly sandboxLimits: SandboxLimits;
  /** A worker whose resident memory passes this is killed, and its query refused. */
  readonly maxRssBytes: number;
  /** After the query's own deadline, how long the worker may take to stop before it is killed. */
  readonly killGraceMs: number;
  /** How often a busy worker's memory is read from /proc. */
  readonly rssPollMs: number;
  readonly logger: Logger;
  readonly onKill?: () => void;
}

export type PoolTask = Omit<TaskMessage, 'kind' | 'id'>;

export interface QueryPool {
  /**
   * `tenant`: the caller's opaque key; queries without one are not capped. `waitUntil`: epoch ms
   * after which a query still waiting for a worker is refused.
   */
  run(task: PoolTask, signal?: AbortSignal, tenant?: string, waitUntil?: number): Promise<WorkerOutcome>;
  /** Resolves once a worker is started and ready (the bench measures kill → ready). */
  warm(): Promise<void>;
  close(): Promise<void>;
}

export const memoryError = (maxRssBytes: number) =>
  new RunnerError(
    'QUERY_INVALID',
    `The query needed more than ${Math.round(maxRssBytes / (1024 * 1024))} MB of memory and was stopped. Compute smaller values or read fewer rows.`,
  );

const waitedTooLongError = () => unavailableError('Every query worker stayed busy longer than a query may wait; retry shortly.', 1);
const stoppedError = (signal: AbortSignal | undefined) =>
  signal?.reason instanceof RunnerError ? signal.reason : unavailableError('The query runner is shutting down; retry the query.', 1);

/** A query that waits for a worker. */
interface Waiter {
  readonly tenant: string | undefined;
  resolve(worker: Worker): void;
  reject(error: unknown): void;
}

/** The worker died before it received the task; `reported` is what the caller gets if a retry is not possible. */
class NotStarted extends Error {
  readonly reported: RunnerError;

  constructor(reported: RunnerError) {
    super(reported.message);
    this.reported = reported;
  }
}

const WORKER_ENTRY = new URL('./worker-main.ts', import.meta.url);

interface Worker {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  busy: boolean;
}

export function createQueryPool(options: PoolOptions): QueryPool {
  const workers = new Set<Worker>();
  const waiting: Waiter[] = [];
  /** Workers each tenant holds now; a tenant at `perTenant` waits even when a worker is idle. */
  const turns = createFairTurns();
  const perTenant = Math.max(1, Math.floor(options.size / 2));
  const underCap = (tenant: string | undefined) => tenant === undefined || turns.heldBy(tenant) < perTenant;
  let nextId = 1;
  let closed = false;

  const spawn = (): Worker => {
    const child = fork(WORKER_ENTRY, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], serialization: 'advanced' });
    const ready = new Promise<void>((resolve, reject) => {
      child.once('message', (message: WorkerMessage) => (message.kind === 'ready' ? resolve() : reject(new Error('worker did not start'))));
      child.once('exit', () => reject(new Error('worker exited before it was ready')));
    });
    ready.catch(() => undefined);
    child.send({ kind: 'init', sandboxLimits: options.sandboxLimits });
    const worker: Worker = { child, ready, busy: false };
    workers.add(worker);
    child.once('exit', () => {
      workers.delete(worker);
      // Keep one warm worker, so the next query does not pay for a start.
      if (!closed && workers.size === 0) spawn();
    });
    return worker;
  };

  const acquire = async (tenant: string | undefined, signal: AbortSignal | undefined, waitUntil: number | undefined): Promise<Worker> => {
    const idle = underCap(tenant) ? ([...workers].find((w) => !w.busy && isAlive(w)) ?? (workers.size < options.size ? spawn() : undefined)) : undefined;
    // Counted before any await, so two queries of one tenant cannot both pass the cap.
    if (idle) {
      turns.take(tenant);
      idle.busy = true;
      return idle;
    }
    return new Promise<Worker>((resolve, reject) => {
      const waiter: Waiter = { tenant, resolve, reject };
      const leave = (error: unknown) => {
        const index = waiting.indexOf(waiter);
        if (index < 0) return;
        waiting.splice(index, 1);
        reject(error);
      };
      const timer = waitUntil === undefined ? undefined : setTimeout(() => leave(waitedTooLongError()), Math.max(0, waitUntil - Date.now()));
      const onAbort = () => leave(stoppedError(signal));
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      waiter.resolve = (worker) => (done(), resolve(worker));
      waiter.reject = (error) => (done(), reject(error));
      waiting.push(waiter);
    });
  };


  /** Hands the worker (or a fresh one for a lost worker) straight to the next waiting query that may run. */
  const release = (worker: Worker, alive: boolean, tenant: string | undefined) => {
    turns.give(tenant);
    const index = closed ? -1 : turns.next(waiting, underCap);
    if (index < 0) {
      worker.busy = false;
      return;
    }
    const [next] = waiting.splice(index, 1);
    const handed = alive && workers.has(worker) ? worker : spawn();
    handed.busy = true;
    turns.take(next!.tenant);
    next!.resolve(handed);
  };

  const kill = (worker: Worker, reason: string) => {
    options.onKill?.();
    options.logger.warn({ pid: worker.child.pid, reason }, 'query worker killed');
    // It leaves the pool at once, before its exit is reported, so no query is handed to it.
    workers.delete(worker);
    worker.child.kill('SIGKILL');
  };

  const run = async (task: PoolTask, signal?: AbortSignal, tenant?: string, waitUntil?: number, attempt = 1): Promise<WorkerOutcome> => {
    if (closed) throw unavailableError('The query runner is shutting down; retry the query.', 1);
    if (signal?.aborted) throw stoppedError(signal);
    const worker = await acquire(tenant, signal, waitUntil);
    let alive = true;
    try {
      await worker.ready.catch(() => {
        alive = false;
        throw unavailableError('A query worker failed to start; retry the query.', 1);
      });
      return await runOn(worker, task, signal, () => (alive = false));
    } catch (error) {
      // A worker that died before the task reached it (killed while idle) did not run the query:
      // run it once more on a fresh worker instead of failing the caller (after this worker is
      // released, so the tenant's cap counts it once).
      if (!(error instanceof NotStarted)) throw error;
      if (attempt > 1) throw error.reported;
    } finally {
      release(worker, alive, tenant);
    }
    return run(task, signal, tenant, waitUntil, attempt + 1);
  };


  /** One task on one worker, watched: deadline plus grace, memory ceiling, shutdown, a dying worker. */
  const runOn = (worker: Worker, task: PoolTask, signal: AbortSignal | undefined, lost: () => void) =>
    new Promise<WorkerOutcome>((resolve, reject) => {
      const id = nextId++;
      let settled = false;
      let started = false;
      const settle = (outcome: { value: WorkerOutcome } | { error: unknown }) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        clearInterval(memory);
        worker.child.off('message', onMessage);
        worker.child.off('exit', onExit);
        signal?.removeEventListener('abort', onAbort);
        if ('value' in outcome) resolve(outcome.value);
        else reject(outcome.error);
      };
      let sentAt = 0;
      /** Timeouts and memory kills carry the worker time they took: it counts against the caller's budget. */
      const costly = (error: RunnerError) => error.withWorkerMs(Math.round(performance.now() - sentAt));
      const stop = (error: RunnerError, reason: string) => {
        if (settled) return;
        lost();
        kill(worker, reason);
        settle({ error });
      };
      const onMessage = (message: WorkerMessage) => {
        if (message.kind === 'started' && message.id === id) started = true;
        if (message.kind === 'done' && message.id === id) settle({ value: message.outcome });
        if (message.kind === 'failed' && message.id === id) {
          if (message.detail) options.logger.error({ detail: message.detail }, 'query worker failed');
          const error = new RunnerError(message.error.code, message.error.message, message.error.retryAfterSeconds);
          settle({ error: error.code === 'QUERY_TIMEOUT' ? costly(error) : error });
        }
      };
      const onExit = () => {
        lost();
        const error = unavailableError('The query worker stopped unexpectedly; nothing was charged, retry the query.', 1);
        settle({ error: started ? error : new NotStarted(error) });
      };
      const onAbort = () => stop(stoppedError(signal), 'stopped');
      const deadline = setTimeout(() => stop(costly(timeoutError(task.limits.timeoutMs)), 'deadline'), task.limits.timeoutMs + options.killGraceMs);
      const memory = setInterval(() => {
        void rssOf(worker.child.pid).then((rss) => {
          if (rss !== undefined && rss > options.maxRssBytes && workers.has(worker) && worker.child.exitCode === null) {
            stop(costly(memoryError(options.maxRssBytes)), `rss ${rss}`);
          }
        });
      }, options.rssPollMs);
      worker.child.on('message', onMessage);
      worker.child.once('exit', onExit);
      signal?.addEventListener('abort', onAbort, { once: true });
      // Shutdown may have begun while this query waited for its worker to start.
      if (signal?.aborted) return onAbort();
      const message: TaskMessage = { kind: 'task', id, ...task };
      sentAt = performance.now();
      worker.child.send(message);
    });

  spawn();
  return {
    run,
    warm: async () => {
      const idle = [...workers].find((w) => !w.busy) ?? (workers.size < options.size ? spawn() : undefined);
      await idle?.ready;
    },
    async close() {
      closed = true;
      for (const entry of waiting.splice(0)) entry.reject(unavailableError('The query runner is shutting down; retry the query.', 1));
      const exits = [...workers].map((w) => new Promise<void>((done) => (w.child.exitCode === null ? w.child.once('exit', () => done()) : done())));
      for (const worker of workers) worker.child.kill('SIGKILL');
      await Promise.all(exits);
    },
  };
}

/** A worker killed from outside is alive until its exit event; the signal code says so earlier. */
const isAlive = (worker: Worker) => worker.child.exitCode === null && worker.child.signalCode === null && worker.child.connected;

/** Resident memory of a process in bytes, from /proc (Linux); undefined where there is no /proc. */
export async function rssOf(pid: number | undefined): Promise<number | undefined> {
  if (pid === undefined) return undefined;
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}
