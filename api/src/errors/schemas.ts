/**
 * The error bodies of SPEC "Errors → Error shapes" as zod schemas: the OpenAPI document describes
 * them, and `schemas.test.ts` checks that `bodyFor` builds exactly these for every code and style.
 */
import { z } from 'zod';
import { type ErrorCode, type ErrorStyle, MESSAGES } from './codes.ts';

const accountState = z.enum(['authenticated', 'anonymous']);

export const flatError = z
  .strictObject({ status: z.literal('error'), message: z.string().describe('Safe to show to a user; says what to fix.') })
  .meta({ id: 'FlatError', description: 'Export, SQL and connected-sheet routes.' });

export const sqlError = z
  .strictObject({
    status: z.literal('error'),
    message: z.string(),
    code: z.enum(['QUERY_INVALID', 'QUERY_TIMEOUT', 'QUERY_RESULT_TOO_LARGE', 'QUERY_BUSY', 'QUERY_BACKEND_UNAVAILABLE', 'RUNNER_BUDGET_EXCEEDED', 'QUERY_CONCURRENCY_LIMITED', 'EMAIL_NOT_VERIFIED']),
  })
  .meta({ id: 'SqlError', description: 'A SQL failure, or an email not verified yet (SQL, exports, sheet uploads): the flat shape with `code`.' });

/** The dashboard's internal session routes (not in the public document): flat with `code`. */
export const sessionError = z.strictObject({
  status: z.literal('error'),
  message: z.string(),
  code: z.enum(['SESSION_REQUIRED', 'CSRF_REJECTED', 'SIGNIN_FAILED', 'SIGNIN_RATE_LIMITED', 'EMAIL_TAKEN', 'REAUTH_REQUIRED', 'PAYMENTS_PENDING', 'EMAIL_LINK_INVALID', 'EMAIL_RATE_LIMITED']),
});

export const lookupError = z
  .strictObject({
    status: z.literal('error'),
    account_state: accountState,
    data: z.strictObject({
      error: z.string(),
      code: z
        .enum(['UPSTREAM_RATE_LIMITED', 'UPSTREAM_UNAVAILABLE', 'UPSTREAM_FORBIDDEN', 'UPSTREAM_BAD_RESPONSE', 'SOURCE_UNAVAILABLE', 'SERVICE_UNAVAILABLE', 'INTERNAL_ERROR'])
        .optional()
        .describe('Only on upstream and internal failures.'),
    }),
  })
  .meta({ id: 'LookupError', description: 'The data lookup envelope of a failure.' });

export const sheetUnauthorized = z
  .strictObject({ error: z.literal('Unauthorized'), message: z.literal(MESSAGES.SHEET_AUTH_REQUIRED) })
  .meta({ id: 'SheetUnauthorized', description: 'Connected-sheet routes without a valid key.' });

export const notFoundPath = z
  .strictObject({ error: z.literal('Not Found'), message: z.string() })
  .meta({ id: 'NotFound', description: 'Unknown path.' });

export const serviceUnavailable = z
  .strictObject({ status: z.literal('error'), message: z.literal(MESSAGES.SERVICE_UNAVAILABLE), code: z.literal('SERVICE_UNAVAILABLE') })
  .meta({ id: 'ServiceUnavailable', description: 'PostgreSQL or Redis could not be reached for a moment; retry after `Retry-After` seconds.' });

export const internalError = z
  .strictObject({ error: z.strictObject({ message: z.literal(MESSAGES.INTERNAL_ERROR) }) })
  .meta({ id: 'InternalError', description: 'Unexpected failure; never carries internal text.' });

const credits = z.strictObject({
  remaining_usd: z.number().describe('Balance, USD.'),
  request_cost_usd: z.number().describe('Cost of the refused request, USD.'),
});

export const insufficientCreditFlat = z
  .strictObject({ status: z.literal('error'), error: z.literal('insufficient_credit'), message: z.string(), credits })
  .meta({ id: 'InsufficientCredit', description: '402 on export and SQL routes. Nothing was charged.' });

export const insufficientCreditLookup = z
  .strictObject({
    status: z.literal('error'),
    error: z.literal('insufficient_credit'),
    message: z.string(),
    account_state: accountState,
    data: z.strictObject({ error: z.string(), code: z.literal('INSUFFICIENT_CREDIT') }),
    credits,
  })
  .meta({ id: 'InsufficientCreditLookup', description: '402 on data lookups. Nothing was charged.' });

export const requestLimitExceeded = z
  .strictObject({
    status: z.literal('error'),
    error: z.literal('REQUEST_LIMIT_EXCEEDED'),
    account_state: z.literal('anonymous'),
    message: z.string(),
    limit: z.number().int(),
    remaining: z.literal(0),
    hint: z.string(),
  })
  .meta({ id: 'RequestLimitExceeded', description: 'The anonymous allowance (50 per 24 hours per IP) is spent.' });

export const rateLimited = z
  .strictObject({
    status: z.literal('error'),
    error: z.literal('Too many requests'),
    message: z.literal(MESSAGES.RATE_LIMITED),
    data: z.strictObject({ error: z.literal(MESSAGES.RATE_LIMITED), code: z.literal('RATE_LIMITED') }),
  })
  .meta({ id: 'RateLimited', description: 'Burst limit (100 per 15 minutes per IP); text/plain when the client prefers it.' });

export const methodNotAllowed = z
  .strictObject({
    jsonrpc: z.literal('2.0'),
    error: z.strictObject({ code: z.literal(-32000), message: z.string() }),
    id: z.null(),
  })
  .meta({ id: 'MethodNotAllowed', description: 'GET or DELETE on /mcp: a JSON-RPC error, as MCP clients expect.' });

/** The body schema `bodyFor` uses for `code` on a route of `style`. */
export function errorBodySchema(code: ErrorCode, style: ErrorStyle): z.ZodType {
  switch (code) {
    case 'NOT_FOUND_PATH':
      return notFoundPath;
    case 'METHOD_NOT_ALLOWED':
      return methodNotAllowed;
    case 'SHEET_AUTH_REQUIRED':
      return sheetUnauthorized;
    case 'RATE_LIMITED':
      return rateLimited;
    case 'REQUEST_LIMIT_EXCEEDED':
      return requestLimitExceeded;
    case 'INSUFFICIENT_CREDIT':
      return style === 'lookup' ? insufficientCreditLookup : insufficientCreditFlat;
    case 'INVALID_INPUT':
      return style === 'lookup' ? lookupError : flatError;
    case 'INTERNAL_ERROR':
      return style === 'lookup' ? lookupError : internalError;
    case 'SERVICE_UNAVAILABLE':
      return style === 'lookup' ? lookupError : serviceUnavailable;
    case 'UPSTREAM_RATE_LIMITED':
    case 'UPSTREAM_UNAVAILABLE':
    case 'UPSTREAM_FORBIDDEN':
    case 'UPSTREAM_BAD_RESPONSE':
    case 'SOURCE_UNAVAILABLE':
    case 'LOOKUP_NOT_FOUND':
      return lookupError;
    case 'QUERY_INVALID':
    case 'QUERY_TIMEOUT':
    case 'QUERY_RESULT_TOO_LARGE':
    case 'QUERY_BUSY':
    case 'QUERY_BACKEND_UNAVAILABLE':
    case 'RUNNER_BUDGET_EXCEEDED':
    case 'QUERY_CONCURRENCY_LIMITED':
    case 'EMAIL_NOT_VERIFIED':
      return sqlError;
    case 'AUTH_REQUIRED':
    case 'EXPORT_LIMIT_EXCEEDED':
    case 'SHEET_LIMIT_EXCEEDED':
    case 'ADMIN_UNAUTHORIZED':
    case 'ADMIN_NOT_FOUND':
    case 'DATASET_NOT_FOUND':
    case 'DATASET_FORBIDDEN':
    case 'DATASET_CONFLICT':
    case 'UPLOAD_TOO_LARGE':
    case 'SHEET_QUOTA_EXCEEDED':
    case 'EXPORT_NOT_FOUND':
    case 'EXPORT_UNAVAILABLE':
    case 'REQUEST_TOO_LARGE':
      return flatError;
    case 'SESSION_REQUIRED':
    case 'CSRF_REJECTED':
    case 'SIGNIN_FAILED':
    case 'SIGNIN_RATE_LIMITED':
    case 'EMAIL_TAKEN':
    case 'REAUTH_REQUIRED':
    case 'PAYMENTS_PENDING':
    case 'EMAIL_LINK_INVALID':
    case 'EMAIL_RATE_LIMITED':
      return sessionError;
  }
}
