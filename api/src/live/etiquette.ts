/**
 * Upstream etiquette shared by every pod (DECISIONS §2): at most one call per `intervalMs` per
 * upstream (arXiv: one per 3 s), a bounded wait for the next free slot, and the upstream's own
 * "wait N seconds" (Stack Exchange `backoff`, a 429's Retry-After). One Redis implementation and
 * one in-memory implementation (a single process, or tests).
 */
import { UpstreamError } from './errors.ts';
import type { LiveSource } from './types.ts';

export interface EtiquetteRule {
  /** Minimum time between two calls to the upstream, from any pod. */
  intervalMs: number;
  /**
   * Added to the interval because pods send at slightly different latencies after their slot; it
   * keeps the interval as the upstream measures it (arXiv counts from its side).
   */
  marginMs: number;
  /** The wait queue is bounded by time: a caller whose slot is further away is refused. */
  maxWaitMs: number;
}

export type EtiquetteRules = Readonly<Record<LiveSource, EtiquetteRule>>;

export const DEFAULT_ETIQUETTE: EtiquetteRules = {
  wiki: { intervalMs: 100, marginMs: 0, maxWaitMs: 2_000 },
  arxiv: { intervalMs: 3_000, marginMs: 250, maxWaitMs: 9_000 },
  stackexchange: { intervalMs: 100, marginMs: 0, maxWaitMs: 2_000 },
  pypi: { intervalMs: 50, marginMs: 0, maxWaitMs: 2_000 },
  openalex: { intervalMs: 100, marginMs: 0, maxWaitMs: 2_000 },
};

export interface Etiquette {
  /** Resolves when this caller may call the upstream; throws UPSTREAM_RATE_LIMITED when the queue is full. */
  acquire(source: LiveSource): Promise<void>;
  /** Records that the upstream asked for no calls during the next `seconds`. */
  backoff(source: LiveSource, seconds: number): Promise<void>;
}

/** The outcome of one reservation: wait this long, or refused (with the upstream's own wait, if any). */
export type Reservation = { waitMs: number } | { refused: true; backoffMs: number };

export function refusal(source: LiveSource, backoffMs: number): UpstreamError {
  // Retry-After only when the source itself said how long (SPEC "Data source codes").
  const retryAfter = backoffMs > 0 ? Math.ceil(backoffMs / 1000) : undefined;
  return new UpstreamError('UPSTREAM_RATE_LIMITED', source, backoffMs > 0 ? 'upstream backoff in force' : 'etiquette queue full', retryAfter);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits out a reservation. A backoff can arrive while a caller sleeps towards its slot (another
 * call's answer carried it), so a caller that slept asks again before it sends.
 */
export async function waitFor(source: LiveSource, reservation: Reservation, rule: EtiquetteRule, backoffLeftMs: () => Promise<number>): Promise<void> {
  if ('refused' in reservation) throw refusal(source, reservation.backoffMs);
  if (reservation.waitMs <= 0) return;
  await sleep(reservation.waitMs);
  const left = await backoffLeftMs();
  if (left > rule.maxWaitMs) throw refusal(source, left);
  if (left > 0) await sleep(left);
}
