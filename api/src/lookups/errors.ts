/**
 * What a lookup failure means to a caller: live-source failures keep their UPSTREAM_* code (and
 * Retry-After only when the source said how long), a runner that cannot be reached (or is
 * restarting, issue 22) is 503 QUERY_BACKEND_UNAVAILABLE with Retry-After in the lookup envelope,
 * as for SQL; anything else is INTERNAL_ERROR without its text (SPEC "Data source codes").
 */
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import { isUpstreamError } from '../live/errors.ts';
import { RunnerCallError } from '../runners/client.ts';
import { sqlFailure } from '../sql/runner-errors.ts';

const RUNNER_AWAY = 'The data service for this source is temporarily unavailable. No credit was used; retry after Retry-After seconds.';

export function lookupFailure(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (isUpstreamError(error)) {
    const retry: Record<string, string> = {};
    if (error.code === 'UPSTREAM_RATE_LIMITED' && error.retryAfterSeconds) retry['Retry-After'] = String(error.retryAfterSeconds);
    return new ApiError(ErrorCode[error.code], { message: error.message }, retry);
  }
  if (error instanceof RunnerCallError && error.code === 'QUERY_BACKEND_UNAVAILABLE') {
    // The SQL mapping's status and Retry-After, with a lookup's message.
    const away = sqlFailure(error);
    return new ApiError(away.code, { message: RUNNER_AWAY }, { ...away.headers });
  }
  return new ApiError(ErrorCode.INTERNAL_ERROR);
}

export function notFound(keywords: string, sourceId: string): ApiError {
  return new ApiError(ErrorCode.LOOKUP_NOT_FOUND, { message: `No results found for "${keywords}" in ${sourceId}` });
}
