/**
 * Rate-limit counters: one interface, two adapters (Redis shared by all pods with an in-process
 * insurance limiter, or in-process only for the embedded default). The limiter objects are
 * rate-limiter-flexible's, which both adapters return; `take` decides several counters of one
 * request at once (one Redis round trip), on the same keys those objects read and write.
 */
import type { RateLimiterAbstract } from 'rate-limiter-flexible';

export interface CounterOptions {
  /** Distinguishes counters in one store, e.g. `burst`. */
  readonly name: string;
  readonly points: number;
  readonly durationS: number;
}

/** One count to take from a counter this backend made. */
export interface CounterTake {
  readonly counter: RateLimiterAbstract;
  readonly key: string;
  /** Give the count back when it is over the limit, so a refused request never counts. */
  readonly refundIfOver?: boolean;
}

export interface TakeResult {
  /** The count including this take (before any refund), as rate-limiter-flexible reports it. */
  readonly consumed: number;
  readonly msBeforeNext: number;
  /** `consumed` is above the counter's points. */
  readonly over: boolean;
}

/**
 * Work another module adds to a request's counter call, so it costs no round trip of its own (the
 * billing's credit hold, DECISIONS §3 "Holds"). `lua` is the body of a Lua function
 * `rider(over, RK, RA)` run after the counters in the same script: `over` is true when a counter
 * refused the request, `RK`/`RA` are this rider's keys and arguments. Its return value comes back
 * as `reply`. The text must be fixed (the script is cached by it); only keys and arguments vary.
 */
export interface TakeRider {
  readonly lua: string;
  readonly keys: readonly string[];
  readonly args: readonly (string | number)[];
}

export interface TakeWithRider {
  readonly results: TakeResult[];
  /** The rider's return value; undefined when the rider did not run (in-process counters, Redis down). */
  readonly reply: unknown;
}

export interface LimiterBackend {
  readonly kind: 'redis' | 'memory';
  counter(options: CounterOptions): RateLimiterAbstract;
  /**
   * Takes one count from each counter in order, stopping after the first that is over: the results
   * are as many as the takes up to and including that one.
   */
  take(takes: readonly CounterTake[]): Promise<TakeResult[]>;
  /** `take` with a rider in the same Redis call; an in-process backend never runs the rider. */
  takeWith(takes: readonly CounterTake[], rider: TakeRider): Promise<TakeWithRider>;
  /** Resolves true once the store is reachable, false after the timeout (limits then use insurance). */
  ready(timeoutMs?: number): Promise<boolean>;
  close(): Promise<void>;
}
