/**
 * HTTP byte ranges for immutable objects (RFC 9110 §14), as static file servers answer them and
 * as DuckDB's httpfs and other Parquet readers use them: one range per request, `bytes=a-b`,
 * `bytes=a-` and `bytes=-n`. A header we cannot use is ignored (200 with the whole object), except
 * a range that starts past the end, which is 416. The header is parsed by `range-parser` (as
 * Express's own static files do).
 */
import parseRange from 'range-parser';

export type RangeDecision =
  | { readonly kind: 'full' }
  | { readonly kind: 'partial'; readonly start: number; readonly end: number }
  | { readonly kind: 'unsatisfiable' };

const FULL: RangeDecision = { kind: 'full' };
const UNSATISFIABLE: RangeDecision = { kind: 'unsatisfiable' };

export function decideRange(header: string | undefined, size: number): RangeDecision {
  const spec = header?.trim();
  // Other units, several ranges, or nonsense (range-parser would trim inner spaces; we never did):
  // serving the whole object is always a valid answer.
  if (!spec?.startsWith('bytes=') || /[,\s]/.test(spec)) return FULL;
  const parsed = parseRange(size, spec);
  if (parsed === -2) return FULL;
  if (parsed !== -1) return { kind: 'partial', start: parsed[0]!.start, end: parsed[0]!.end };
  return unsatisfiableOrNot(spec, size);
}

/**
 * range-parser answers -1 (no satisfiable range) for two headers RFC 9110 §14.1.2 answers
 * otherwise: `a-b` with b < a is not a valid range (ignored: the whole object), and a suffix
 * longer than a non-empty object asks for all of it.
 */
function unsatisfiableOrNot(spec: string, size: number): RangeDecision {
  const [first = '', last = ''] = spec.slice('bytes='.length).split('-');
  if (first === '') return Number(last) > 0 && size > 0 ? { kind: 'partial', start: 0, end: size - 1 } : UNSATISFIABLE;
  return last !== '' && Number(last) < Number(first) ? FULL : UNSATISFIABLE;
}

/** `If-Range` with a validator other than our strong ETag means "send it all". */
export function ifRangeAllowsPartial(ifRange: string | undefined, etag: string): boolean {
  return ifRange === undefined || ifRange === etag;
}

/** `If-None-Match: "a", "b"` or `*`. Weak comparison, as RFC 9110 §13.1.2 asks for this header. */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => bare(tag) === bare(etag));
}

/** What RFC 9110 §13.2.2 makes of a request's preconditions, before any range is looked at. */
export type Precondition = 'proceed' | 'not-modified' | 'failed';

export interface ConditionalHeaders {
  readonly ifMatch?: string;
  readonly ifNoneMatch?: string;
  readonly ifModifiedSince?: string;
  readonly ifUnmodifiedSince?: string;
}

/**
 * The evaluation order of RFC 9110 §13.2.2 for GET and HEAD: If-Match (strong comparison), else
 * If-Unmodified-Since, fail with 412; then If-None-Match, else If-Modified-Since, answer 304. An
 * unparsable date is ignored, as the RFC asks. Dates have one-second resolution on the wire.
 */
export function evaluatePreconditions(headers: ConditionalHeaders, etag: string, lastModified: Date): Precondition {
  if (headers.ifMatch !== undefined) {
    if (!strongMatch(headers.ifMatch, etag)) return 'failed';
  } else if (isModifiedSince(headers.ifUnmodifiedSince, lastModified) === true) {
    return 'failed';
  }
  if (headers.ifNoneMatch !== undefined) return etagMatches(headers.ifNoneMatch, etag) ? 'not-modified' : 'proceed';
  return isModifiedSince(headers.ifModifiedSince, lastModified) === false ? 'not-modified' : 'proceed';
}

/** `If-Match`: `*` or a listed tag equal to ours; a weak tag never matches (RFC 9110 §13.1.1). */
function strongMatch(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim() === etag);
}

/** Whether the object changed after the header's date; undefined when there is no usable date. */
function isModifiedSince(header: string | undefined, lastModified: Date): boolean | undefined {
  if (!header) return undefined;
  const since = Date.parse(header);
  if (Number.isNaN(since)) return undefined;
  return Math.floor(lastModified.getTime() / 1000) > Math.floor(since / 1000);
}
