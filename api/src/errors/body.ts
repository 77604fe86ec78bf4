/**
 * Error bodies per SPEC "Errors → Error shapes". The only place error JSON is built.
 */
import { formatUsd } from '../money.ts';
import { type BodyContext, ErrorCode, MESSAGES } from './codes.ts';
import type { ApiError } from './api-error.ts';

type Body = Record<string, unknown>;

const usd = (micro: number) => Number(formatUsd(micro));

export function bodyFor(error: ApiError, ctx: BodyContext): Body {
  switch (error.code) {
    case ErrorCode.NOT_FOUND_PATH:
      return { error: 'Not Found', message: error.message };
    case ErrorCode.METHOD_NOT_ALLOWED:
      // What MCP Streamable HTTP clients expect from a stateless server (SDK examples): JSON-RPC error.
      return { jsonrpc: '2.0', error: { code: -32000, message: MESSAGES.METHOD_NOT_ALLOWED }, id: null };
    case ErrorCode.AUTH_REQUIRED:
      return { status: 'error', message: MESSAGES.AUTH_REQUIRED };
    case ErrorCode.SHEET_AUTH_REQUIRED:
      return { error: 'Unauthorized', message: MESSAGES.SHEET_AUTH_REQUIRED };
    case ErrorCode.RATE_LIMITED:
      return {
        status: 'error',
        error: 'Too many requests',
        message: MESSAGES.RATE_LIMITED,
        data: { error: MESSAGES.RATE_LIMITED, code: ErrorCode.RATE_LIMITED },
      };
    case ErrorCode.REQUEST_LIMIT_EXCEEDED:
      return {
        status: 'error',
        error: ErrorCode.REQUEST_LIMIT_EXCEEDED,
        account_state: 'anonymous',
        message: error.message,
        limit: error.details.limit ?? 50,
        remaining: 0,
        hint: MESSAGES.REQUEST_LIMIT_HINT,
      };
    case ErrorCode.EXPORT_LIMIT_EXCEEDED:
    case ErrorCode.SHEET_LIMIT_EXCEEDED:
      return { status: 'error', message: error.message };
    case ErrorCode.INSUFFICIENT_CREDIT:
      return insufficientCredit(error, ctx);
    case ErrorCode.ADMIN_UNAUTHORIZED:
    case ErrorCode.ADMIN_NOT_FOUND:
    case ErrorCode.REQUEST_TOO_LARGE:
      return { status: 'error', message: error.message };
    case ErrorCode.INVALID_INPUT:
      return ctx.style === 'lookup'
        ? { status: 'error', account_state: ctx.accountState, data: { error: error.message } }
        : { status: 'error', message: error.message };
    case ErrorCode.INTERNAL_ERROR:
      return internal(ctx);
    case ErrorCode.SERVICE_UNAVAILABLE:
      return ctx.style === 'lookup'
        ? { status: 'error', account_state: ctx.accountState, data: { error: MESSAGES.SERVICE_UNAVAILABLE, code: error.code } }
        : { status: 'error', message: MESSAGES.SERVICE_UNAVAILABLE, code: error.code };
    case ErrorCode.UPSTREAM_RATE_LIMITED:
    case ErrorCode.UPSTREAM_UNAVAILABLE:
    case ErrorCode.UPSTREAM_FORBIDDEN:
    case ErrorCode.UPSTREAM_BAD_RESPONSE:
    case ErrorCode.SOURCE_UNAVAILABLE:
      return { status: 'error', account_state: ctx.accountState, data: { error: error.message, code: error.code } };
    case ErrorCode.LOOKUP_NOT_FOUND:
      return { status: 'error', account_state: ctx.accountState, data: { error: error.message } };
    case ErrorCode.QUERY_INVALID:
    case ErrorCode.QUERY_TIMEOUT:
    case ErrorCode.QUERY_RESULT_TOO_LARGE:
    case ErrorCode.QUERY_BUSY:
    case ErrorCode.QUERY_BACKEND_UNAVAILABLE:
    case ErrorCode.RUNNER_BUDGET_EXCEEDED:
    case ErrorCode.QUERY_CONCURRENCY_LIMITED:
    case ErrorCode.SESSION_REQUIRED:
    case ErrorCode.CSRF_REJECTED:
    case ErrorCode.SIGNIN_FAILED:
    case ErrorCode.SIGNIN_RATE_LIMITED:
    case ErrorCode.EMAIL_TAKEN:
    case ErrorCode.REAUTH_REQUIRED:
    case ErrorCode.PAYMENTS_PENDING:
    case ErrorCode.EMAIL_NOT_VERIFIED:
    case ErrorCode.EMAIL_LINK_INVALID:
    case ErrorCode.EMAIL_RATE_LIMITED:
      return { status: 'error', message: error.message, code: error.code };
    case ErrorCode.DATASET_NOT_FOUND:
    case ErrorCode.DATASET_FORBIDDEN:
    case ErrorCode.DATASET_CONFLICT:
    case ErrorCode.UPLOAD_TOO_LARGE:
    case ErrorCode.SHEET_QUOTA_EXCEEDED:
    case ErrorCode.EXPORT_NOT_FOUND:
    case ErrorCode.EXPORT_UNAVAILABLE:
      return { status: 'error', message: error.message };
  }
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
