/**
 * The one live lookup that the REST route and the MCP tool both call (STYLE §7): circuit breaker,
 * shared etiquette, coalescing of identical lookups, a stored copy of every success, and the stale
 * fallback on an upstream failure (SPEC "Stale results").
 */
import type { Breakers, CircuitBreaker } from './breaker.ts';
import type { StaleCopyStore } from './copies.ts';
import { UpstreamError, isUpstreamError } from './errors.ts';
import type { Etiquette } from './etiquette.ts';
import type { SingleFlight } from './single-flight.ts';
import type { ClientAnswer, LiveClient, LivePayload, LiveSource } from './types.ts';
import type { WikipediaArticleRef, WikipediaClient } from './wikipedia.ts';

export interface LiveClients {
  wiki: WikipediaClient;
  arxiv: LiveClient;
  stackexchange: LiveClient;
  pypi: LiveClient;
  openalex: LiveClient;
}

export interface LiveDeps {
  clients: LiveClients;
  etiquette: Etiquette;
  breakers: Breakers;
  copies: StaleCopyStore;
  flights: SingleFlight<LivePayload>;
  /**
   * A stored copy younger than this is served as a fresh answer without calling the upstream. It
   * shares answers across pods (coalescing is per pod). 0 turns it off.
   */
  freshForMs?: number;
  /** Failures that must not fail the lookup (saving a copy, recording a backoff) are reported here. */
  onBackgroundError?: (error: unknown) => void;
  now?: () => Date;
}

export interface StaleNote {
  message: string;
  cached_at: string | null;
}

/** What the route puts in the envelope's `data`; `stale` only on an answer from a stored copy. */
export interface LiveData extends LivePayload {
  stale?: StaleNote;
}

/** Case, width and spacing do not change what the upstreams find, so they share a copy and a flight. */
export function normalizeQuery(query: string): string {
  return query.normalize('NFKC').trim().replace(/\s+/g, ' ').toLowerCase();
}

/** Upstream page sizes are bounded here too, whatever the caller validated (STYLE §9). */
export const MAX_LIVE_LIMIT = 50;

export async function liveLookup(source: LiveSource, query: string, limit: number, deps: LiveDeps): Promise<LiveData> {
  const normalized = normalizeQuery(query);
  const bounded = Math.min(MAX_LIVE_LIMIT, Math.max(1, Math.floor(limit) || 1));
  // Nothing to search for: every upstream would reject it, and it must not cost an upstream call.
  if (!normalized) return { results: [], total: 0 };
  const client = deps.clients[source];
  return run(source, normalized, bounded, () => client.search(normalized, bounded), deps);
}

/** The `/https:/{wikipediaUrl}` route: one article, with the same etiquette, copies and fallback. */
export async function wikiArticleLookup(ref: WikipediaArticleRef, deps: LiveDeps): Promise<LiveData> {
  return run('wiki', `article:${ref.lang}:${ref.title}`, 1, () => deps.clients.wiki.article(ref.lang, ref.title), deps);
}

async function run(source: LiveSource, key: string, limit: number, call: () => Promise<ClientAnswer>, deps: LiveDeps): Promise<LiveData> {
  try {
    return await deps.flights.run(`${source}\n${key}\n${limit}`, () => fresh(source, key, limit, call, deps));
  } catch (error) {
    if (!isUpstreamError(error)) throw error;
    return stale(source, key, limit, error, deps);
  }
}

async function fresh(source: LiveSource, key: string, limit: number, call: () => Promise<ClientAnswer>, deps: LiveDeps): Promise<LivePayload> {
  const recent = await recentCopy(source, key, limit, deps);
  if (recent) return recent;
  const answer = await guarded(source, call, deps);
  if (answer.backoffSeconds) await background(deps, () => deps.etiquette.backoff(source, answer.backoffSeconds!));
  await background(deps, () => deps.copies.save(source, key, answer.payload, nowOf(deps)));
  return answer.payload;
}

/** One upstream call under the breaker and the etiquette. */
async function guarded(source: LiveSource, call: () => Promise<ClientAnswer>, deps: LiveDeps): Promise<ClientAnswer> {
  const breaker = deps.breakers.for(source);
  if (!breaker.admit()) throw new UpstreamError('UPSTREAM_UNAVAILABLE', source, 'circuit open');
  try {
    await deps.etiquette.acquire(source);
  } catch (error) {
    breaker.abandon();
    throw error;
  }
  try {
    const answer = await call();
    breaker.success();
    return answer;
  } catch (error) {
    await afterFailure(source, error, breaker, deps);
    throw error;
  }
}

async function afterFailure(source: LiveSource, error: unknown, breaker: CircuitBreaker, deps: LiveDeps): Promise<void> {
  if (!isUpstreamError(error)) return breaker.abandon();
  // Only an outage opens the circuit; any other answer shows the upstream is reachable.
  if (error.code === 'UPSTREAM_UNAVAILABLE') breaker.failure();
  else breaker.success();
  // A source that says how long to wait is honoured by every pod, not just this caller.
  const seconds = error.retryAfterSeconds;
  if (seconds) await background(deps, () => deps.etiquette.backoff(source, seconds));
}

/** A copy within `freshForMs` that holds at least as many results as asked for (or all there were). */
async function recentCopy(source: LiveSource, key: string, limit: number, deps: LiveDeps): Promise<LivePayload | null> {
  if (!deps.freshForMs) return null;
  let copy = null;
  try {
    copy = await deps.copies.find(source, key);
  } catch (error) {
    deps.onBackgroundError?.(error);
  }
  if (!copy || nowOf(deps).getTime() - copy.fetchedAt.getTime() > deps.freshForMs) return null;
  const complete = copy.payload.results.length >= limit || (copy.payload.total !== null && copy.payload.results.length >= copy.payload.total);
  return complete ? { ...copy.payload, results: copy.payload.results.slice(0, limit) } : null;
}

const nowOf = (deps: LiveDeps): Date => (deps.now ?? (() => new Date()))();

async function stale(source: LiveSource, key: string, limit: number, error: UpstreamError, deps: LiveDeps): Promise<LiveData> {
  let copy = null;
  try {
    copy = await deps.copies.find(source, key);
  } catch (storeError) {
    deps.onBackgroundError?.(storeError);
  }
  if (!copy) throw error;
  const cachedAt = Number.isNaN(copy.fetchedAt.getTime()) ? null : copy.fetchedAt.toISOString();
  return {
    ...copy.payload,
    results: copy.payload.results.slice(0, limit),
    stale: { message: `The ${source} source could not be reached just now, so this is a stored copy of an earlier answer.`, cached_at: cachedAt },
  };
}

async function background(deps: LiveDeps, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    deps.onBackgroundError?.(error);
  }
}
