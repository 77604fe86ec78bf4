import { RateLimiterMemory } from 'rate-limiter-flexible';
import { takeOneByOne } from './take.ts';
import type { CounterOptions, CounterTake, LimiterBackend, TakeResult } from './types.ts';

/** In-process counters: correct for one process (the embedded default), per-pod otherwise. */
export class MemoryLimiterBackend implements LimiterBackend {
  readonly kind = 'memory';
  readonly #prefix: string;

  constructor(prefix = '') {
    this.#prefix = prefix;
  }

  counter({ name, points, durationS }: CounterOptions) {
    return new RateLimiterMemory({ keyPrefix: `${this.#prefix}${name}`, points, duration: durationS });
  }

  take(takes: readonly CounterTake[]): Promise<TakeResult[]> {
    return takeOneByOne(takes, (counter) => counter);
  }

  async ready(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {}
}
