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

type BodySchema = (style: ErrorStyle) => z.ZodType;
const always = (schema: z.ZodType): BodySchema => () => schema;
const lookupOr = (flatSchema: z.ZodType): BodySchema => (style) => (style === 'lookup' ? lookupError : flatSchema);

/** Each code's body schema, as `bodyFor` builds it; a Record, so a new code without one fails the typecheck. */
const BODY_SCHEMAS: Readonly<Record<ErrorCode, BodySchema>> = {
  NOT_FOUND_PATH: always(notFoundPath),
  METHOD_NOT_ALLOWED: always(methodNotAllowed),
  SHEET_AUTH_REQUIRED: always(sheetUnauthorized),
  RATE_LIMITED: always(rateLimited),
  REQUEST_LIMIT_EXCEEDED: always(requestLimitExceeded),
  INSUFFICIENT_CREDIT: (style) => (style === 'lookup' ? insufficientCreditLookup : insufficientCreditFlat),
  INVALID_INPUT: lookupOr(flatError),
  INTERNAL_ERROR: lookupOr(internalError),
  SERVICE_UNAVAILABLE: lookupOr(serviceUnavailable),
  UPSTREAM_RATE_LIMITED: always(lookupError),
  UPSTREAM_UNAVAILABLE: always(lookupError),
  UPSTREAM_FORBIDDEN: always(lookupError),
  UPSTREAM_BAD_RESPONSE: always(lookupError),
  SOURCE_UNAVAILABLE: always(lookupError),
  LOOKUP_NOT_FOUND: always(lookupError),
  QUERY_INVALID: always(sqlError),
  QUERY_TIMEOUT: always(sqlError),
  QUERY_RESULT_TOO_LARGE: always(sqlError),
  QUERY_BUSY: always(sqlError),
  QUERY_BACKEND_UNAVAILABLE: always(sqlError),
  RUNNER_BUDGET_EXCEEDED: always(sqlError),
  QUERY_CONCURRENCY_LIMITED: always(sqlError),
  EMAIL_NOT_VERIFIED: always(sqlError),
  AUTH_REQUIRED: always(flatError),
  EXPORT_LIMIT_EXCEEDED: always(flatError),
  SHEET_LIMIT_EXCEEDED: always(flatError),
  ADMIN_UNAUTHORIZED: always(flatError),
  ADMIN_NOT_FOUND: always(flatError),
  DATASET_NOT_FOUND: always(flatError),
  DATASET_FORBIDDEN: always(flatError),
  DATASET_CONFLICT: always(flatError),
  UPLOAD_TOO_LARGE: always(flatError),
  SHEET_QUOTA_EXCEEDED: always(flatError),
  EXPORT_NOT_FOUND: always(flatError),
  EXPORT_UNAVAILABLE: always(flatError),
  REQUEST_TOO_LARGE: always(flatError),
  SESSION_REQUIRED: always(sessionError),
  CSRF_REJECTED: always(sessionError),
  SIGNIN_FAILED: always(sessionError),
  SIGNIN_RATE_LIMITED: always(sessionError),
  EMAIL_TAKEN: always(sessionError),
  REAUTH_REQUIRED: always(sessionError),
  PAYMENTS_PENDING: always(sessionError),
  EMAIL_LINK_INVALID: always(sessionError),
  EMAIL_RATE_LIMITED: always(sessionError),
};

/** The body schema `bodyFor` uses for `code` on a route of `style`. */
export function errorBodySchema(code: ErrorCode, style: ErrorStyle): z.ZodType {
  return BODY_SCHEMAS[code](style);
}
