/**
 * Bytes delivered count, however they were split (DECISIONS §3): the numbers of
 * the rule, and the pure arithmetic both delivery trackers (`deliveries.ts`, `deliveries-redis.ts`)
 * apply to a window's file.
 *
 * - What counts is the **distinct** bytes of the file that broken responses handed to their
 *   connections, across every range and download under the window's charges (an export file
 *   version, per account) since its last standing charge. Not a sum: a client that restarts a
 *   download from byte 0 three times has not received more of the file, and one that assembles it
 *   from pieces has received every byte once, whatever the split.
 * - Once they cover half the file (`STANDS_AT_SHARE`), the charge stands even if every response
 *   broke. A standing charge makes every re-download and range of the file free for 24 h, so an
 *   honest client whose download broke past half loses nothing by retrying; only a client that stops
 *   for good after taking more than half the file pays, and rows of a CSV or Parquet file are usable
 *   as they arrive.
 * - Refunds of charges under which any byte went out are capped per account per UTC day
 *   (`PARTIAL_REFUNDS_PER_DAY`); past the cap such a charge stands. A response that broke before its
 *   first byte (an error) is always refunded and never counts.
 */

/** Bytes `[start, end)` of a file. */
export interface ByteSpan {
  readonly start: number;
  readonly end: number;
}

/** What one broken response delivered of a file of `sizeBytes`. */
export interface BytesDelivered {
  readonly span: ByteSpan;
  readonly sizeBytes: number;
}

/** The share of a file whose delivery, in distinct bytes, makes the charge stand. */
export const STANDS_AT_SHARE = 0.5;
/** Refunds per account per UTC day of charges under which part of a file went out. */
export const PARTIAL_REFUNDS_PER_DAY = 3;
/**
 * How long the bytes a file's broken responses delivered are remembered without a standing charge:
 * longer than a kept export version is usually served, so waiting a day does not start the count
 * afresh. A standing charge forgets them (its window is paid).
 */
export const DELIVERED_BYTES_TTL_MS = 30 * 24 * 60 * 60 * 1000;
/** How long a day's count of partial refunds is kept: past the end of its UTC day. */
export const PARTIAL_REFUNDS_TTL_MS = 25 * 60 * 60 * 1000;

/** Distinct bytes that make the charge of a file of `sizeBytes` stand (at least 1). */
export function bytesToStand(sizeBytes: number): number {
  return Math.max(1, Math.ceil(sizeBytes * STANDS_AT_SHARE));
}

/** True when the span holds at least one byte. */
export function carriesBytes(span: ByteSpan | undefined): span is ByteSpan {
  return span !== undefined && span.end > span.start;
}

/** The spans with `add` merged in: sorted by start, none overlapping or touching. */
export function mergeSpans(spans: readonly ByteSpan[], add?: ByteSpan): ByteSpan[] {
  const sorted = [...spans, ...(carriesBytes(add) ? [add] : [])].sort((a, b) => a.start - b.start);
  const merged: ByteSpan[] = [];
  for (const span of sorted) {
    const last = merged.at(-1);
    if (last && span.start <= last.end) merged[merged.length - 1] = { start: last.start, end: Math.max(last.end, span.end) };
    else merged.push(span);
  }
  return merged;
}

/** Distinct bytes the merged spans cover. */
export function coveredBytes(spans: readonly ByteSpan[]): number {
  return mergeSpans(spans).reduce((total, span) => total + (span.end - span.start), 0);
}
