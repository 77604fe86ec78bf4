/**
 * Rate-limit counters: one interface, two adapters (Redis shared by all pods with an in-process
 * insurance limiter, or in-process only for the embedded default). The limiter objects are
 * rate-limiter-flexible's, which both adapters return.
 */
import type { RateLimiterAbstract } from 'rate-limiter-flexible';

export interface CounterOptions {
  /** Distinguishes counters in one store, e.g. `burst`. */
  readonly name: string;
  readonly points: number;
  readonly durationS: number;
}

export interface LimiterBackend {
  readonly kind: 'redis' | 'memory';
  counter(options: CounterOptions): RateLimiterAbstract;
  /** Resolves true once the store is reachable, false after the timeout (limits then use insurance). */
  ready(timeoutMs?: number): Promise<boolean>;
  close(): Promise<void>;
}
