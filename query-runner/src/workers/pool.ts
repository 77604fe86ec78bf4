/**
 * The hard deadline and the memory cap. User SQL runs in a small pool of worker processes
 * (`supervisor.ts`: spawning, killing and replacing them, and the per-run watchdog that kills a
 * worker at the deadline plus a short grace or past the memory ceiling). One runaway costs only its
 * own query: other queries run in other workers, and the runner process itself never executes user
 * SQL. Which query gets a free worker is `fair-scheduler.ts`'s: one tenant (caller) runs on at most
 * half the workers, its other queries wait their fair turn; the free class holds at most half of
 * them while the paid class needs the rest (a worker it borrowed is killed and handed back); a wait
 * ends at its `waitUntil` (503, retry), and a query whose caller stopped waiting (`signal`) leaves
 * the queue, or has its worker killed when it already runs.
 */
import { type CapacityClass, classOf, classShares } from '../capacity-classes.ts';
import { unavailableError } from '../errors.ts';
import { createFairScheduler, type Grant } from './fair-scheduler.ts';
import type { PoolTask, SupervisorOptions, Worker, WorkerSupervisor } from './supervisor.ts';
import { NotStarted, createWorkerSupervisor, stoppedError } from './supervisor.ts';
import type { WorkerOutcome } from './protocol.ts';

export type PoolOptions = SupervisorOptions;
export type { PoolTask };

/** Where a task waits and for whom. */
export interface RunPlace {
  /** Aborted when the caller stopped waiting: a waiting task leaves the queue, a running one's worker is killed. */
  readonly signal?: AbortSignal;
  /** The caller's opaque key; tasks without one are not capped. */
  readonly tenant?: string;
  /** The caller's capacity class (`capacity-classes.ts`); none is not held to the free share. */
  readonly capacityClass?: CapacityClass;
  /** Epoch ms after which a task still waiting for a worker is refused. */
  readonly waitUntil?: number;
}

export interface QueryPool {
  run(task: PoolTask, place?: RunPlace): Promise<WorkerOutcome>;
  /** Resolves once a worker is started and ready (the bench measures kill → ready). */
  warm(): Promise<void>;
  close(): Promise<void>;
}

const waitedTooLongError = () => unavailableError('Every query worker stayed busy longer than a query may wait; retry shortly.', 1);
const shuttingDownError = () => unavailableError('The query runner is shutting down; retry the query.', 1);
// Not the caller's doing and not billed: its free-class query ran on a worker the paid class lent and needed back.
const reclaimedError = () =>
  unavailableError('The free tier\'s share of query capacity is in use; this query ran on borrowed capacity that was needed back. Nothing was charged; retry shortly.', 2);

/** Hands the worker (or a fresh one for a lost worker) straight to the next waiting query that may run. */
function release(supervisor: WorkerSupervisor, granted: Grant<Worker>, alive: () => boolean): void {
  const worker = granted.slot;
  const handOff = () => {
    // A lost worker's replacement: the idle one the supervisor already started for it, if any.
    const handed = alive() && supervisor.has(worker) ? worker : (supervisor.takeIdle() ?? supervisor.spawn());
    handed.busy = true;
    return handed;
  };
  if (!granted.release(handOff)) worker.busy = false;
}

export function createQueryPool(options: PoolOptions): QueryPool {
  const supervisor = createWorkerSupervisor(options);
  const scheduler = createFairScheduler<Worker>({
    perTenant: Math.max(1, Math.floor(options.size / 2)),
    shares: classShares(options.size),
    idle: (capacityClass) => supervisor.takeIdle(capacityClass === 'free'),
    waitedTooLong: waitedTooLongError,
    stopped: stoppedError,
  });
  let closed = false;

  /** One go on a worker: its outcome, or why the query may go again (the error it answers otherwise). */
  const attempt = async (task: PoolTask, place: RunPlace): Promise<{ outcome: WorkerOutcome } | { again: 'not-started' | 'reclaimed'; error: unknown }> => {
    if (closed) throw shuttingDownError();
    if (place.signal?.aborted) throw stoppedError(place.signal);
    const reclaimed = new AbortController();
    const signal = place.signal ? AbortSignal.any([place.signal, reclaimed.signal]) : reclaimed.signal;
    const granted = await scheduler.acquire({
      tenant: place.tenant, capacityClass: classOf(place.capacityClass), signal: place.signal, waitUntil: place.waitUntil,
      reclaim: () => reclaimed.abort(reclaimedError()),
    });
    let alive = true;
    // Free-class work yields the CPU to paid queries: slots alone do not keep a paid query from
    // waiting on cores that uninterruptible free queries keep busy.
    if (classOf(place.capacityClass) === 'free') supervisor.lower(granted.slot);
    try {
      await granted.slot.ready.catch(() => {
        alive = false;
        throw unavailableError('A query worker failed to start; retry the query.', 1);
      });
      return { outcome: await supervisor.runOn(granted.slot, task, signal, () => (alive = false)) };
    } catch (error) {
      if (error instanceof NotStarted) return { again: 'not-started', error: error.reported };
      if (reclaimed.signal.aborted && !place.signal?.aborted) return { again: 'reclaimed', error };
      throw error;
    } finally {
      // Released before any second go, so the tenant's cap counts this query once.
      release(supervisor, granted, () => alive);
    }
  };

  const run = async (task: PoolTask, place: RunPlace = {}): Promise<WorkerOutcome> => {
    const waitMs = place.waitUntil === undefined ? undefined : Math.max(0, place.waitUntil - Date.now());
    let startFailures = 0;
    for (;;) {
      const result = await attempt(task, place);
      if ('outcome' in result) return result.outcome;
      // A worker that died before the task reached it (killed while idle) did not run the query:
      // it runs once more on a fresh worker instead of failing the caller.
      if (result.again === 'not-started' && ++startFailures > 1) throw result.error;
      // A free query whose borrowed worker the paid class took back is not the caller's doing: it
      // waits again, as long as it first could, for as long as its caller waits (the API's deadline).
      if (result.again === 'reclaimed' && waitMs !== undefined) place = { ...place, waitUntil: Date.now() + waitMs };
    }
  };

  return {
    run,
    warm: () => supervisor.warm(),
    async close() {
      closed = true;
      scheduler.close(shuttingDownError());
      await supervisor.close();
    },
  };
}
