/**
 * What a lookup failure means to a caller: live-source failures keep their UPSTREAM_* code (and
 * Retry-After only when the source said how long), a runner that cannot serve it now (unreachable,
 * its lookup capacity full, out of time) is SOURCE_UNAVAILABLE, 503 with Retry-After, a blinking store is SERVICE_UNAVAILABLE, anything else is INTERNAL_ERROR without its text (SPEC "Data source codes").
 */
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import { asApiError } from '../errors/unavailable.ts';
import { isUpstreamError } from '../live/errors.ts';
import { RunnerError } from '@uda/shared/runner-contract';

export function lookupFailure(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (isUpstreamError(error)) {
    const retry: Record<string, string> = {};
    if (error.code === 'UPSTREAM_RATE_LIMITED' && error.retryAfterSeconds) retry['Retry-After'] = String(error.retryAfterSeconds);
    return new ApiError(ErrorCode[error.code], { message: error.message }, retry);
  }
  if (error instanceof RunnerError && NOT_NOW.has(error.code)) {
    return new ApiError(ErrorCode.SOURCE_UNAVAILABLE, {}, { 'Retry-After': String(error.retryAfterSeconds ?? SOURCE_RETRY_AFTER_S) });
  }
  return asApiError(error);
}

/** Runner answers that mean "not now": the lookup is a 503 with Retry-After, never a 500 (DECISIONS §4 Fair shares). */
const NOT_NOW: ReadonlySet<string> = new Set(['QUERY_BACKEND_UNAVAILABLE', 'QUERY_BUSY', 'QUERY_TIMEOUT']);
const SOURCE_RETRY_AFTER_S = 2;

export function notFound(keywords: string, sourceId: string): ApiError {
  return new ApiError(ErrorCode.LOOKUP_NOT_FOUND, { message: `No results found for "${keywords}" in ${sourceId}` });
}
