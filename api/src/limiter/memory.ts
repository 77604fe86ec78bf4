import { RateLimiterMemory } from 'rate-limiter-flexible';
import { takeOneByOne } from './take.ts';
import type { CounterOptions, CounterTake, LimiterBackend, TakeResult, TakeWithRider } from './types.ts';

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

  /** No Redis here: the rider is not run (its owner does the same step in process). */
  async takeWith(takes: readonly CounterTake[]): Promise<TakeWithRider> {
    return { results: await this.take(takes), reply: undefined };
  }

  async ready(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {}
}
