/**
 * Bounds concurrent executions per runner: `maxRunning` at once, `maxQueued` waiting, and a full
 * queue refuses at once (QUERY_BACKEND_UNAVAILABLE: the service is short of capacity, not this query
 * still running elsewhere) instead of growing without bound (STYLE §9).
 */
import { unavailableError } from './errors.ts';

const queueFullError = () => unavailableError('Every query slot of the query service is taken; retry shortly.', 1);

export interface Limiter {
  readonly running: number;
  readonly queued: number;
  run<T>(work: () => Promise<T>): Promise<T>;
}

export function createLimiter(maxRunning: number, maxQueued: number, onChange: () => void = () => {}): Limiter {
  let running = 0;
  const waiting: (() => void)[] = [];

  const acquire = async () => {
    if (running < maxRunning) {
      running += 1;
      return;
    }
    if (waiting.length >= maxQueued) throw queueFullError();
    const turn = new Promise<void>((resolve) => waiting.push(resolve));
    onChange();
    await turn;
    // The slot was handed over by `release`, which did not decrement `running`.
  };

  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  };

  return {
    get running() {
      return running;
    },
    get queued() {
      return waiting.length;
    },
    async run(work) {
      await acquire();
      onChange();
      try {
        return await work();
      } finally {
        release();
        onChange();
      }
    },
  };
}
