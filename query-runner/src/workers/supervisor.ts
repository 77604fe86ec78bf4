/**
 * The query workers' processes: spawning them, keeping one warm, killing and replacing them, and
 * the per-run watchdog. DuckDB's `interrupt()` ends most queries at the deadline inside the worker;
 * what it cannot interrupt (one huge scalar call: `repeat('x', 4e9)`, a quadratic `levenshtein`)
 * the watchdog ends by killing the worker: at the deadline plus a short grace, or as soon as the
 * worker's resident memory passes the ceiling. Who runs on which worker is `fair-scheduler.ts`'s job.
 */
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { setPriority } from 'node:os';
import type { Logger } from '@uda/shared/logger';
import { RunnerError, timeoutError, unavailableError } from '../errors.ts';
import type { SandboxLimits } from '../sandbox.ts';
import type { TaskMessage, WorkerMessage, WorkerOutcome } from './protocol.ts';

export interface SupervisorOptions {
  /** Workers at most. */
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

export interface Worker {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  busy: boolean;
  /** Ran free-class work: its CPU priority is lowered for good (an unprivileged process cannot raise it again). */
  lowered: boolean;
}

export interface WorkerSupervisor {
  /**
   * An idle live worker, or a new one while there are fewer than `size`; marked busy. `lowered`:
   * which kind to prefer (free-class work takes the workers already lowered first, paid the others).
   */
  takeIdle(lowered?: boolean): Worker | undefined;
  /** Lowers the worker's CPU priority (free-class work), so it yields the CPU to paid queries. */
  lower(worker: Worker): void;
  /** Whether the worker is still one of the pool's (not killed, not exited). */
  has(worker: Worker): boolean;
  /** A new worker (a lost one's replacement). */
  spawn(): Worker;
  /** Runs one task on the worker, watched; `lost()` is called when the worker will not serve again. */
  runOn(worker: Worker, task: PoolTask, signal: AbortSignal | undefined, lost: () => void): Promise<WorkerOutcome>;
  /** Resolves once a worker is started and ready (the bench measures kill → ready). */
  warm(): Promise<void>;
  /** Kills every worker and waits for their exits; no worker is started after this. */
  close(): Promise<void>;
}

export const memoryError = (maxRssBytes: number) =>
  new RunnerError(
    'QUERY_INVALID',
    `The query needed more than ${Math.round(maxRssBytes / (1024 * 1024))} MB of memory and was stopped. Compute smaller values or read fewer rows.`,
  );

export const stoppedError = (signal: AbortSignal | undefined) =>
  signal?.reason instanceof RunnerError ? signal.reason : unavailableError('The query runner is shutting down; retry the query.', 1);

/** The worker died before it received the task; `reported` is what the caller gets if a retry is not possible. */
export class NotStarted extends Error {
  readonly reported: RunnerError;

  constructor(reported: RunnerError) {
    super(reported.message);
    this.reported = reported;
  }
}

const WORKER_ENTRY = new URL('./worker-main.ts', import.meta.url);
/** The nice value of workers that ran free-class queries: under CPU contention they get the least. */
const LOWERED_PRIORITY = 19;

export function createWorkerSupervisor(options: SupervisorOptions): WorkerSupervisor {
  const workers = new Set<Worker>();
  let nextId = 1;
  let closed = false;
  /** The database of the last query: a new worker opens it while it starts, before anyone waits for it. */
  let lastDbPath: string | undefined;

  const spawn = (): Worker => {
    const child = fork(WORKER_ENTRY, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], serialization: 'advanced' });
    const ready = new Promise<void>((resolve, reject) => {
      child.once('message', (message: WorkerMessage) => (message.kind === 'ready' ? resolve() : reject(new Error('worker did not start'))));
      child.once('exit', () => reject(new Error('worker exited before it was ready')));
    });
    ready.catch(() => undefined);
    child.send({ kind: 'init', sandboxLimits: options.sandboxLimits, ...(lastDbPath ? { dbPath: lastDbPath } : {}) });
    const worker: Worker = { child, ready, busy: false, lowered: false };
    workers.add(worker);
    child.once('exit', () => {
      workers.delete(worker);
      // Keep one warm worker, so the next query does not pay for a start.
      if (!closed && workers.size === 0) spawn();
    });
    return worker;
  };

  /**
   * One idle worker is kept started (below `size`), so the next query, a paid one the free class
   * left a slot for among them, does not wait a second or more for a process to start.
   */
  const keepOneIdle = () => {
    if (!closed && workers.size < options.size && ![...workers].some((w) => !w.busy)) spawn();
  };

  const kill = (worker: Worker, reason: string) => {
    options.onKill?.();
    options.logger.warn({ pid: worker.child.pid, reason }, 'query worker killed');
    // It leaves the pool at once, before its exit is reported, so no query is handed to it.
    workers.delete(worker);
    worker.child.kill('SIGKILL');
    keepOneIdle();
  };

  const runOn = (worker: Worker, task: PoolTask, signal: AbortSignal | undefined, lost: () => void) => {
    if (task.sheets.length === 0) lastDbPath = task.dbPath;
    return watch({ worker, task, signal, lost, id: nextId++, options, kill: (reason) => kill(worker, reason), pooled: () => workers.has(worker) });
  };

  spawn();
  return {
    takeIdle(lowered = false) {
      const live = [...workers].filter((w) => !w.busy && isAlive(w));
      const idle = live.find((w) => w.lowered === lowered) ?? live[0] ?? (workers.size < options.size ? spawn() : undefined);
      if (idle) idle.busy = true;
      keepOneIdle();
      return idle;
    },
    has: (worker) => workers.has(worker),
    lower: (worker) => lower(worker, options.logger),
    spawn,
    runOn,
    async warm() {
      const idle = [...workers].find((w) => !w.busy) ?? (workers.size < options.size ? spawn() : undefined);
      await idle?.ready;
    },
    async close() {
      closed = true;
      await killAll(workers);
    },
  };
}

/** Lowers the worker's CPU priority (LOWERED_PRIORITY), once. */
function lower(worker: Worker, logger: SupervisorOptions['logger']): void {
  if (worker.lowered || worker.child.pid === undefined) return;
  worker.lowered = true;
  try {
    setPriority(worker.child.pid, LOWERED_PRIORITY);
  } catch (error) {
    // It already exited: its replacement starts at the normal priority.
    logger.debug({ err: error }, 'could not lower a query worker\'s priority');
  }
}

async function killAll(workers: ReadonlySet<Worker>): Promise<void> {
  const exits = [...workers].map((w) => new Promise<void>((done) => (w.child.exitCode === null ? w.child.once('exit', () => done()) : done())));
  for (const worker of workers) worker.child.kill('SIGKILL');
  await Promise.all(exits);
}

interface Watched {
  readonly worker: Worker;
  readonly task: PoolTask;
  readonly signal: AbortSignal | undefined;
  readonly lost: () => void;
  readonly id: number;
  readonly options: SupervisorOptions;
  readonly kill: (reason: string) => void;
  /** Whether the worker is still the pool's: a memory reading of a worker already killed decides nothing. */
  readonly pooled: () => boolean;
}

/**
 * One task on one worker, watched: deadline plus grace, memory ceiling, shutdown, a dying worker.
 * Kept as one function (55 lines): its handlers share the one `settle` that detaches them all.
 */
function watch({ worker, task, signal, lost, id, options, kill, pooled }: Watched): Promise<WorkerOutcome> {
  return new Promise<WorkerOutcome>((resolve, reject) => {
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
      kill(reason);
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
        if (rss !== undefined && rss > options.maxRssBytes && pooled() && worker.child.exitCode === null) stop(costly(memoryError(options.maxRssBytes)), `rss ${rss}`);
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
