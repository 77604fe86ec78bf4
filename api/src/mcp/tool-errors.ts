/**
 * Tool failures as MCP results (SPEC "POST /mcp"; DECISIONS §9): `isError: true` with a plain,
 * user-safe message. Only our own ApiError messages pass through; nothing internal does. A failure
 * the service will get over (a blinking store, the runner away, a busy query) says when to retry.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { findSource } from '@uda/shared/catalog';
import type { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import { asApiError } from '../errors/unavailable.ts';

export function toolText(text: string, isError = false): CallToolResult {
  return { content: [{ type: 'text', text }], ...(isError ? { isError: true } : {}) };
}

/** Unsupported source, no results, bad input and insufficient credit say so; failures say `Search failed for {source}: {reason}`. */
export function toolFailure(thrown: unknown, requestedSource: string): CallToolResult {
  const source = findSource(requestedSource)?.id ?? requestedSource;
  const error = asApiError(thrown);
  switch (error.code) {
    case ErrorCode.INVALID_INPUT:
    case ErrorCode.LOOKUP_NOT_FOUND:
    case ErrorCode.INSUFFICIENT_CREDIT:
      return toolText(error.message, true);
    case ErrorCode.UPSTREAM_RATE_LIMITED:
    case ErrorCode.UPSTREAM_UNAVAILABLE:
    case ErrorCode.UPSTREAM_FORBIDDEN:
    case ErrorCode.UPSTREAM_BAD_RESPONSE:
    case ErrorCode.QUERY_BACKEND_UNAVAILABLE:
    case ErrorCode.SOURCE_UNAVAILABLE:
    case ErrorCode.SERVICE_UNAVAILABLE:
      return toolText(`Search failed for ${source}: ${retryText(error)}`, true);
    default:
      return toolText(`Search failed for ${source}: the search failed inside the service. No credit was used.`, true);
  }
}

/** run_sql failures: our own messages (validator, limits, credit, daily cap) pass; anything else is generic. */
export function sqlToolFailure(thrown: unknown): CallToolResult {
  const error = asApiError(thrown);
  if (error.code !== ErrorCode.INTERNAL_ERROR) return toolText(`Query failed: ${retryText(error)}`, true);
  return toolText('Query failed: the query failed inside the service. Nothing was charged.', true);
}

/** A call refused by a limit: the limit's message, and when to retry if the limit says so. */
export function limitFailure(error: ApiError): CallToolResult & { content: [{ type: 'text'; text: string }] } {
  return { content: [{ type: 'text', text: retryText(error) }], isError: true };
}

/** The error's message, and when to retry if it says so (the MCP form of Retry-After: an agent waits instead of giving up). */
function retryText(error: ApiError): string {
  const retryAfter = error.headers['Retry-After'];
  return retryAfter ? `${error.message} Retry after ${retryAfter} s.` : error.message;
}
