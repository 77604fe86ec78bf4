/**
 * Error bodies per SPEC "Errors → Error shapes". The only place error JSON is built.
 */
import { formatUsd } from '../money.ts';
import { type BodyContext, ErrorCode, MESSAGES } from './codes.ts';
import type { ApiError } from './api-error.ts';

type Body = Record<string, unknown>;

const usd = (micro: number) => Number(formatUsd(micro));

type Shape = (error: ApiError, ctx: BodyContext) => Body;

const flat: Shape = (error) => ({ status: 'error', message: error.message });
const flatWithCode: Shape = (error) => ({ status: 'error', message: error.message, code: error.code });
const lookupEnvelope: Shape = (error, ctx) => ({ status: 'error', account_state: ctx.accountState, data: { error: error.message } });
const lookupWithCode: Shape = (error, ctx) => ({ status: 'error', account_state: ctx.accountState, data: { error: error.message, code: error.code } });

/** Each code's body; a Record, so a new code without a body fails the typecheck. */
const SHAPES: Readonly<Record<ErrorCode, Shape>> = {
  NOT_FOUND_PATH: (error) => ({ error: 'Not Found', message: error.message }),
  // What MCP Streamable HTTP clients expect from a stateless server (SDK examples): JSON-RPC error.
  METHOD_NOT_ALLOWED: () => ({ jsonrpc: '2.0', error: { code: -32000, message: MESSAGES.METHOD_NOT_ALLOWED }, id: null }),
  AUTH_REQUIRED: () => ({ status: 'error', message: MESSAGES.AUTH_REQUIRED }),
  SHEET_AUTH_REQUIRED: () => ({ error: 'Unauthorized', message: MESSAGES.SHEET_AUTH_REQUIRED }),
  RATE_LIMITED: () => ({
    status: 'error',
    error: 'Too many requests',
    message: MESSAGES.RATE_LIMITED,
    data: { error: MESSAGES.RATE_LIMITED, code: ErrorCode.RATE_LIMITED },
  }),
  REQUEST_LIMIT_EXCEEDED: (error) => ({
    status: 'error',
    error: ErrorCode.REQUEST_LIMIT_EXCEEDED,
    account_state: 'anonymous',
    message: error.message,
    limit: error.details.limit ?? 50,
    remaining: 0,
    hint: MESSAGES.REQUEST_LIMIT_HINT,
  }),
  EXPORT_LIMIT_EXCEEDED: flat,
  SHEET_LIMIT_EXCEEDED: flat,
  INSUFFICIENT_CREDIT: (error, ctx) => insufficientCredit(error, ctx),
  ADMIN_UNAUTHORIZED: flat,
  ADMIN_NOT_FOUND: flat,
  REQUEST_TOO_LARGE: flat,
  INVALID_INPUT: (error, ctx) => (ctx.style === 'lookup' ? lookupEnvelope(error, ctx) : flat(error, ctx)),
  INTERNAL_ERROR: (_error, ctx) => internal(ctx),
  SERVICE_UNAVAILABLE: (error, ctx) =>
    ctx.style === 'lookup'
      ? { status: 'error', account_state: ctx.accountState, data: { error: MESSAGES.SERVICE_UNAVAILABLE, code: error.code } }
      : { status: 'error', message: MESSAGES.SERVICE_UNAVAILABLE, code: error.code },
  UPSTREAM_RATE_LIMITED: lookupWithCode,
  UPSTREAM_UNAVAILABLE: lookupWithCode,
  UPSTREAM_FORBIDDEN: lookupWithCode,
  UPSTREAM_BAD_RESPONSE: lookupWithCode,
  SOURCE_UNAVAILABLE: lookupWithCode,
  LOOKUP_NOT_FOUND: lookupEnvelope,
  QUERY_INVALID: flatWithCode,
  QUERY_TIMEOUT: flatWithCode,
  QUERY_RESULT_TOO_LARGE: flatWithCode,
  QUERY_BUSY: flatWithCode,
  QUERY_BACKEND_UNAVAILABLE: flatWithCode,
  RUNNER_BUDGET_EXCEEDED: flatWithCode,
  QUERY_CONCURRENCY_LIMITED: flatWithCode,
  SESSION_REQUIRED: flatWithCode,
  CSRF_REJECTED: flatWithCode,
  SIGNIN_FAILED: flatWithCode,
  SIGNIN_RATE_LIMITED: flatWithCode,
  EMAIL_TAKEN: flatWithCode,
  REAUTH_REQUIRED: flatWithCode,
  PAYMENTS_PENDING: flatWithCode,
  EMAIL_NOT_VERIFIED: flatWithCode,
  EMAIL_LINK_INVALID: flatWithCode,
  EMAIL_RATE_LIMITED: flatWithCode,
  DATASET_NOT_FOUND: flat,
  DATASET_FORBIDDEN: flat,
  DATASET_CONFLICT: flat,
  UPLOAD_TOO_LARGE: flat,
  SHEET_QUOTA_EXCEEDED: flat,
  EXPORT_NOT_FOUND: flat,
  EXPORT_UNAVAILABLE: flat,
};

export function bodyFor(error: ApiError, ctx: BodyContext): Body {
  return SHAPES[error.code](error, ctx);
}

function insufficientCredit(error: ApiError, ctx: BodyContext): Body {
  const credits = error.details.credits ?? { remainingMicro: 0, requestCostMicro: 0 };
  const body: Body = { status: 'error', error: 'insufficient_credit', message: MESSAGES.INSUFFICIENT_CREDIT };
  if (ctx.style === 'lookup') {
    body.account_state = ctx.accountState;
    body.data = { error: MESSAGES.INSUFFICIENT_CREDIT, code: ErrorCode.INSUFFICIENT_CREDIT };
  }
  body.credits = { remaining_usd: usd(credits.remainingMicro), request_cost_usd: usd(credits.requestCostMicro) };
  return body;
}

/** A 500 never carries internal text (SPEC: `{error:{message:"Internal Server Error"}}`, or the lookup envelope). */
function internal(ctx: BodyContext): Body {
  if (ctx.style === 'lookup') {
    return {
      status: 'error',
      account_state: ctx.accountState,
      data: { error: 'The search failed inside the service.', code: ErrorCode.INTERNAL_ERROR },
    };
  }
  return { error: { message: MESSAGES.INTERNAL_ERROR } };
}
