/**
 * A short-lived, in-process cache of stored-source answers, with coalescing of identical lookups.
 * Stored sources change only when the exporter publishes a new version (a batch job), so an answer
 * may be reused for `STORED_CACHE_TTL_MS`; a new export shows within that time. Without it, every
 * lookup is a DuckDB query on the runner (10–100 ms of CPU), far from the throughput goal. One
 * cache per API process, built by the composition root (`services.ts`); failures are never cached.
 */
import type { LookupRequest, LookupResponse } from '@uda/shared/runner-contract';
import { SingleFlight } from '../live/single-flight.ts';
import type { RunnerClient } from '../runners/client.ts';

export const STORED_CACHE_TTL_MS = 60_000;
/** Bounded by construction (STYLE §9): at most this many answers, each at most 50 rows. */
export const STORED_CACHE_MAX_ENTRIES = 5_000;

interface Entry {
  answer: LookupResponse;
  at: number;
}

export class StoredLookupCache {
  readonly #entries = new Map<string, Entry>();
  readonly #flights = new SingleFlight<LookupResponse>();
  readonly #runners: Pick<RunnerClient, 'lookup'>;
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(runners: Pick<RunnerClient, 'lookup'>, options: { ttlMs?: number; now?: () => number } = {}) {
    this.#runners = runners;
    this.#ttlMs = options.ttlMs ?? STORED_CACHE_TTL_MS;
    this.#now = options.now ?? Date.now;
  }

  async lookup(request: LookupRequest): Promise<LookupResponse> {
    const key = `${request.source}\n${request.limit}\n${request.keywords.normalize('NFKC').toLowerCase()}`;
    const hit = this.#entries.get(key);
    if (hit && this.#now() - hit.at < this.#ttlMs) return hit.answer;
    return this.#flights.run(key, async () => {
      const answer = await this.#runners.lookup(request);
      // Oldest first in a Map: dropping the first key evicts the oldest entry.
      if (this.#entries.size >= STORED_CACHE_MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!);
      this.#entries.delete(key);
      this.#entries.set(key, { answer, at: this.#now() });
      return answer;
    });
  }
}
