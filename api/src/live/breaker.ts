/**
 * A circuit breaker per upstream, per pod: after `failureThreshold` consecutive UPSTREAM_UNAVAILABLE
 * failures it opens and no call is made for `cooldownMs`; then one probe is let through (half-open).
 * A probe that gets any answer closes it; one that fails the same way opens it again.
 * Kept rather than a dependency: a few dozen lines, and its states feed the open-circuits metric directly.
 */
import type { LiveSource } from './types.ts';

export type BreakerState = 'closed' | 'open' | 'half-open';

export interface BreakerOptions {
  failureThreshold: number;
  cooldownMs: number;
  now?: () => number;
}

export class CircuitBreaker {
  readonly #options: BreakerOptions;
  #failures = 0;
  #openedAt: number | null = null;
  #probing = false;

  constructor(options: BreakerOptions) {
    this.#options = options;
  }

  #now(): number {
    return (this.#options.now ?? Date.now)();
  }

  state(): BreakerState {
    if (this.#openedAt === null) return 'closed';
    return this.#now() - this.#openedAt >= this.#options.cooldownMs ? 'half-open' : 'open';
  }

  /** Whether a call may go out now. In half-open, only one probe at a time. */
  admit(): boolean {
    const state = this.state();
    if (state === 'closed') return true;
    if (state === 'open' || this.#probing) return false;
    this.#probing = true;
    return true;
  }

  /** The upstream answered (even with an error of another kind): it is reachable. */
  success(): void {
    this.#failures = 0;
    this.#openedAt = null;
    this.#probing = false;
  }

  failure(): void {
    this.#failures += 1;
    this.#probing = false;
    if (this.#openedAt !== null || this.#failures >= this.#options.failureThreshold) this.#openedAt = this.#now();
  }

  /** The admitted call never reached the upstream (e.g. the etiquette queue was full). */
  abandon(): void {
    this.#probing = false;
  }
}

export class Breakers {
  readonly #options: BreakerOptions;
  readonly #byUpstream = new Map<LiveSource, CircuitBreaker>();

  constructor(options: BreakerOptions) {
    this.#options = options;
  }

  for(source: LiveSource): CircuitBreaker {
    let breaker = this.#byUpstream.get(source);
    if (!breaker) this.#byUpstream.set(source, (breaker = new CircuitBreaker(this.#options)));
    return breaker;
  }

  /** For the "upstream circuit open" metric. */
  states(): Record<LiveSource, BreakerState> {
    const state = (s: LiveSource) => this.#byUpstream.get(s)?.state() ?? 'closed';
    return { wiki: state('wiki'), arxiv: state('arxiv'), stackexchange: state('stackexchange'), pypi: state('pypi'), openalex: state('openalex') };
  }
}
