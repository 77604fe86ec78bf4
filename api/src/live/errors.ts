/**
 * The upstream error taxonomy (SPEC "Errors → Data source codes", DECISIONS §2 "Upstream signals and
 * their mapping"). Clients throw only `UpstreamError`; the route layer maps `code` to its status and
 * sets `Retry-After` from `retryAfterSeconds`, which is present only when the source said how long.
 */
export type UpstreamCode = 'UPSTREAM_RATE_LIMITED' | 'UPSTREAM_UNAVAILABLE' | 'UPSTREAM_FORBIDDEN' | 'UPSTREAM_BAD_RESPONSE';

// User-safe texts: no upstream body or internal detail ever reaches the caller (SPEC: "Upstream
// failures report that no credit was used").
const MESSAGES: Readonly<Record<UpstreamCode, string>> = {
  UPSTREAM_RATE_LIMITED: 'is rate-limiting requests right now. No credit was used.',
  UPSTREAM_UNAVAILABLE: 'is not responding right now. No credit was used.',
  UPSTREAM_FORBIDDEN: 'refused the request. No credit was used.',
  UPSTREAM_BAD_RESPONSE: 'sent a reply that could not be read. No credit was used.',
};

export class UpstreamError extends Error {
  override readonly name = 'UpstreamError';
  readonly code: UpstreamCode;
  readonly source: string;
  readonly retryAfterSeconds: number | undefined;
  /** Internal detail for logs only; never sent to callers. */
  readonly detail: string;

  constructor(code: UpstreamCode, source: string, detail: string, retryAfterSeconds?: number) {
    super(`The ${source} source ${MESSAGES[code]}`);
    this.code = code;
    this.source = source;
    this.detail = detail;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export function isUpstreamError(error: unknown): error is UpstreamError {
  return error instanceof UpstreamError;
}

/** `Retry-After` is either delta-seconds or an HTTP-date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(1, Math.ceil((at - now) / 1000));
}

/** Status codes with a meaning of their own; anything else unexpected is a reply we cannot use. */
export function errorForStatus(source: string, status: number, retryAfter: string | null): UpstreamError {
  const detail = `HTTP ${status}`;
  if (status === 429) return new UpstreamError('UPSTREAM_RATE_LIMITED', source, detail, parseRetryAfter(retryAfter));
  if (status === 401 || status === 403) return new UpstreamError('UPSTREAM_FORBIDDEN', source, detail);
  if (status >= 500) return new UpstreamError('UPSTREAM_UNAVAILABLE', source, detail);
  return new UpstreamError('UPSTREAM_BAD_RESPONSE', source, detail);
}
