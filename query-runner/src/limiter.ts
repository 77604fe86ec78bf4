/**
 * Bounds concurrent executions per runner: `maxRunning` at once, `maxQueued` waiting, and a full
 * queue refuses at once (QUERY_BACKEND_UNAVAILABLE: the service is short of capacity, not this query
 * still running elsewhere) instead of growing without bound (STYLE §9). A wait is bounded too: past
 * `waitUntil`, or once the caller's signal aborts (it stopped waiting), the waiter leaves the queue.
 * A freed slot goes to the fair turn among the waiters (`fair-turns.ts`), by their `tenant`.
 */
import { unavailableError } from './errors.ts';
import { createFairTurns } from './fair-turns.ts';

const queueFullError = () => unavailableError('Every query slot of the query service is taken; retry shortly.', 1);
const waitedTooLongError = () => unavailableError('The query waited too long for a slot of the query service; retry shortly.', 1);
const goneError = () => unavailableError('The caller stopped waiting for the query.', 1);

export interface WaitBounds {
  /** Epoch ms after which a query still waiting is refused (QUERY_BACKEND_UNAVAILABLE, Retry-After). */
  readonly waitUntil?: number;
  /** Aborted when the caller stopped waiting: the waiter leaves the queue. */
  readonly signal?: AbortSignal;
  /** The caller's opaque key, for the fair turn. */
  readonly tenant?: string;
}

export interface Limiter {
  readonly running: number;
  readonly queued: number;
  run<T>(work: () => Promise<T>, bounds?: WaitBounds): Promise<T>;
}

interface Waiter {
  readonly tenant: string | undefined;
  resolve(): void;
  reject(error: unknown): void;
}

export function createLimiter(maxRunning: number, maxQueued: number, onChange: () => void = () => {}): Limiter {
  let running = 0;
  const waiting: Waiter[] = [];
  const turns = createFairTurns();

  const leave = (waiter: Waiter, error: unknown) => {
    const index = waiting.indexOf(waiter);
    if (index < 0) return;
    waiting.splice(index, 1);
    onChange();
    waiter.reject(error);
  };

  const acquire = async (bounds: WaitBounds) => {
    if (bounds.signal?.aborted) throw goneError();
    if (running < maxRunning) {
      running += 1;
      turns.take(bounds.tenant);
      return;
    }
    if (waiting.length >= maxQueued) throw queueFullError();
    const turn = new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { tenant: bounds.tenant, resolve, reject };
      waiting.push(waiter);
      const timer = bounds.waitUntil === undefined ? undefined : setTimeout(() => leave(waiter, waitedTooLongError()), Math.max(0, bounds.waitUntil - Date.now()));
      const onAbort = () => leave(waiter, goneError());
      bounds.signal?.addEventListener('abort', onAbort, { once: true });
      const done = () => {
        clearTimeout(timer);
        bounds.signal?.removeEventListener('abort', onAbort);
      };
      waiter.resolve = () => (done(), resolve());
      waiter.reject = (error) => (done(), reject(error));
    });
    onChange();
    await turn;
    // The slot was handed over by `release`, which did not decrement `running`.
  };

  const release = (tenant: string | undefined) => {
    turns.give(tenant);
    const index = turns.next(waiting);
    if (index < 0) {
      running -= 1;
      return;
    }
    const [next] = waiting.splice(index, 1);
    turns.take(next!.tenant);
    next!.resolve();
  };

  return {
    get running() {
      return running;
    },
    get queued() {
      return waiting.length;
    },
    async run(work, bounds = {}) {
      await acquire(bounds);
      onChange();
      try {
        return await work();
      } finally {
        release(bounds.tenant);
        onChange();
      }
    },
  };
}
