/**
 * The hard deadline and the memory cap. User SQL runs in a small pool of worker processes
 * (`supervisor.ts`: spawning, killing and replacing them, and the per-run watchdog that kills a
 * worker at the deadline plus a short grace or past the memory ceiling). One runaway costs only its
 * own query: other queries run in other workers, and the runner process itself never executes user
 * SQL. Which query gets a free worker is `fair-scheduler.ts`'s: one tenant (caller) runs on at most
 * half the workers, its other queries wait their fair turn; a wait ends at its `waitUntil` (503,
 * retry), and a query whose caller stopped waiting (`signal`) leaves the queue, or has its worker
 * killed when it already runs.
 */
import { unavailableError } from '../errors.ts';
import { createFairScheduler } from './fair-scheduler.ts';
import type { PoolTask, SupervisorOptions, Worker } from './supervisor.ts';
import { NotStarted, createWorkerSupervisor, stoppedError } from './supervisor.ts';
import type { WorkerOutcome } from './protocol.ts';

export type PoolOptions = SupervisorOptions;
export type { PoolTask };

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

const waitedTooLongError = () => unavailableError('Every query worker stayed busy longer than a query may wait; retry shortly.', 1);
const shuttingDownError = () => unavailableError('The query runner is shutting down; retry the query.', 1);

export function createQueryPool(options: PoolOptions): QueryPool {
  const supervisor = createWorkerSupervisor(options);
  const scheduler = createFairScheduler<Worker>({
    perTenant: Math.max(1, Math.floor(options.size / 2)),
    idle: () => supervisor.takeIdle(),
    waitedTooLong: waitedTooLongError,
    stopped: stoppedError,
  });
  let closed = false;

  /** Hands the worker (or a fresh one for a lost worker) straight to the next waiting query that may run. */
  const release = (worker: Worker, alive: boolean, tenant: string | undefined) => {
    const handOff = () => {
      const handed = alive && supervisor.has(worker) ? worker : supervisor.spawn();
      handed.busy = true;
      return handed;
    };
    if (!scheduler.release(tenant, handOff)) worker.busy = false;
  };

  const run = async (task: PoolTask, signal?: AbortSignal, tenant?: string, waitUntil?: number, attempt = 1): Promise<WorkerOutcome> => {
    if (closed) throw shuttingDownError();
    if (signal?.aborted) throw stoppedError(signal);
    const worker = await scheduler.acquire(tenant, signal, waitUntil);
    let alive = true;
    try {
      await worker.ready.catch(() => {
        alive = false;
        throw unavailableError('A query worker failed to start; retry the query.', 1);
      });
      return await supervisor.runOn(worker, task, signal, () => (alive = false));
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
