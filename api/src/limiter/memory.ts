import { RateLimiterMemory } from 'rate-limiter-flexible';
import type { CounterOptions, LimiterBackend } from './types.ts';

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

  async ready(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {}
}
