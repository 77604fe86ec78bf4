/**
 * What a runner failure means to a SQL caller (SPEC GET /api/v1/query.parquet responses): the
 * runner's codes pass through with their status and Retry-After; anything unexpected is a 500
 * without its text. None of these is ever charged: billing happens only after a result exists.
 */
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import { RunnerError } from '@uda/shared/runner-contract';

const RETRY_AFTER_DEFAULT_S = 5;

export function sqlFailure(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (!(error instanceof RunnerError)) return new ApiError(ErrorCode.INTERNAL_ERROR);
  switch (error.code) {
    case 'QUERY_INVALID':
    case 'QUERY_TIMEOUT':
    case 'QUERY_RESULT_TOO_LARGE':
      return new ApiError(ErrorCode[error.code], { message: error.message });
    case 'QUERY_BUSY':
    case 'QUERY_BACKEND_UNAVAILABLE':
      return new ApiError(ErrorCode[error.code], { message: error.message }, retryAfter(error.retryAfterSeconds));
    default:
      return new ApiError(ErrorCode.INTERNAL_ERROR);
  }
}

/** The object store or the manifest could not be read: the backend is unavailable, not our bug. */
export function backendUnavailable(): ApiError {
  return new ApiError(ErrorCode.QUERY_BACKEND_UNAVAILABLE, {}, retryAfter(undefined));
}

function retryAfter(seconds: number | undefined): Record<string, string> {
  return { 'Retry-After': String(seconds ?? RETRY_AFTER_DEFAULT_S) };
}
