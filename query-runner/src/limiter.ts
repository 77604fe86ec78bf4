/**
 * Bounds concurrent executions per runner: `maxRunning` at once, `maxQueued` waiting, and a full
 * queue refuses at once (QUERY_BACKEND_UNAVAILABLE: the service is short of capacity, not this query
 * still running elsewhere) instead of growing without bound (STYLE §9). A wait is bounded too: past
 * `waitUntil`, or once the caller's signal aborts (it stopped waiting), the waiter leaves the queue
 * (`wait-queue.ts`).
 * A freed slot goes to the fair turn among the waiters (`fair-turns.ts`), by their `tenant`.
 *
 * With `classes` (user SQL, DECISIONS §4 Capacity classes) the free class holds at most half of the
 * slots and of the queue, never more: a slot here is held while the query waits for a worker, so a
 * flood of free queries waiting for workers must not keep a paid query from reaching the worker pool
 * (which lends and takes back workers itself). The paid class may take any slot; a freed slot goes
 * to a class under its share first.
 */
import { unavailableError } from './errors.ts';
import { type CapacityClass, classOf, classShares, nextByClass } from './capacity-classes.ts';
import { createFairTurns } from './fair-turns.ts';
import { createWaitQueue } from './wait-queue.ts';

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
  /** The caller's capacity class (only with `classes`); none is not held to the free share. */
  readonly capacityClass?: CapacityClass;
}

export interface Limiter {
  readonly running: number;
  readonly queued: number;
  run<T>(work: () => Promise<T>, bounds?: WaitBounds): Promise<T>;
}

interface Waiter {
  readonly tenant: string | undefined;
  readonly capacityClass: CapacityClass;
}

export interface LimiterOptions {
  readonly onChange?: () => void;
  /** Split slots and queue by capacity class (user SQL); without it every caller is alike (lookups). */
  readonly classes?: boolean;
}

export function createLimiter(maxRunning: number, maxQueued: number, { onChange = () => {}, classes = false }: LimiterOptions = {}): Limiter {
  let running = 0;
  const queue = createWaitQueue<Waiter, void>({ timedOut: waitedTooLongError, stopped: goneError, onLeave: onChange });
  const turns = createFairTurns();
  const slotShares = classShares(maxRunning);
  const queueShares = classShares(maxQueued);
  const held: Record<CapacityClass, number> = { free: 0, paid: 0 };
  const underShare = (capacityClass: CapacityClass) => held[capacityClass] < slotShares[capacityClass];
  /** Only the free class is capped here, and only with classes. */
  const mayTake = (capacityClass: CapacityClass) => !classes || capacityClass === 'paid' || underShare('free');
  const queueFull = (capacityClass: CapacityClass) =>
    queue.waiting.length >= maxQueued || (classes && capacityClass === 'free' && queue.waiting.filter((w) => w.capacityClass === 'free').length >= queueShares.free);
  const take = ({ tenant, capacityClass }: Waiter) => {
    turns.take(tenant);
    held[capacityClass] += 1;
  };

  const acquire = async (bounds: WaitBounds, capacityClass: CapacityClass) => {
    if (bounds.signal?.aborted) throw goneError();
    if (running < maxRunning && mayTake(capacityClass)) {
      running += 1;
      take({ tenant: bounds.tenant, capacityClass });
      return;
    }
    if (queueFull(capacityClass)) throw queueFullError();
    const timeoutMs = bounds.waitUntil === undefined ? undefined : bounds.waitUntil - Date.now();
    const turn = queue.wait({ tenant: bounds.tenant, capacityClass }, { timeoutMs, signal: bounds.signal });
    onChange();
    // The slot is handed over by `release`, which does not decrement `running`.
    await turn;
  };

  const release = (tenant: string | undefined, capacityClass: CapacityClass) => {
    turns.give(tenant);
    held[capacityClass] -= 1;
    const pick = (waiting: readonly Waiter[]) => (classes ? nextByClass(waiting, underShare, turns.next, (w) => mayTake(w.capacityClass)) : turns.next(waiting));
    if (!queue.serve(take, pick)) running -= 1;
  };

  return {
    get running() {
      return running;
    },
    get queued() {
      return queue.waiting.length;
    },
    async run(work, bounds = {}) {
      const capacityClass = classOf(bounds.capacityClass);
      await acquire(bounds, capacityClass);
      onChange();
      try {
        return await work();
      } finally {
        release(bounds.tenant, capacityClass);
        onChange();
      }
    },
  };
}
