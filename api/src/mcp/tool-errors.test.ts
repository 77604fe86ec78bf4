/**
 * A tool failure that the service will get over says when to retry, as the REST answer's
 * Retry-After does (MCP's form of a 503): an agent can wait and call again instead of giving up.
 */
import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import { sqlToolFailure, toolFailure } from './tool-errors.ts';

const textOf = (result: { content: unknown }) => (result.content as { text: string }[])[0]!.text;
const passing = (code: ErrorCode) => new ApiError(code, {}, { 'Retry-After': '2' });

describe('a tool failure the service will get over', () => {
  it.each([ErrorCode.SOURCE_UNAVAILABLE, ErrorCode.QUERY_BACKEND_UNAVAILABLE, ErrorCode.SERVICE_UNAVAILABLE, ErrorCode.UPSTREAM_RATE_LIMITED])('search_service with %s says when to retry', (code) => {
    expect(textOf(toolFailure(passing(code), 'gutenberg'))).toMatch(/^Search failed for gutenberg: .* Retry after 2 s\.$/);
  });

  it.each([ErrorCode.QUERY_BACKEND_UNAVAILABLE, ErrorCode.QUERY_BUSY, ErrorCode.SERVICE_UNAVAILABLE])('run_sql with %s says when to retry', (code) => {
    expect(textOf(sqlToolFailure(passing(code)))).toMatch(/^Query failed: .* Retry after 2 s\.$/);
  });

  it('a failure without a retry time says none, and an internal one says nothing of its cause', () => {
    expect(textOf(toolFailure(new ApiError(ErrorCode.LOOKUP_NOT_FOUND, { message: 'No results found' }), 'gutenberg'))).not.toContain('Retry after');
    expect(textOf(sqlToolFailure(new Error('connect ECONNREFUSED 10.0.0.7:5432')))).toBe('Query failed: the query failed inside the service. Nothing was charged.');
  });
});
