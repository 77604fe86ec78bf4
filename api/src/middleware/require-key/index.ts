import type { RequestHandler } from 'express';
import { ApiError } from '../../errors/api-error.ts';
import { ErrorCode } from '../../errors/codes.ts';
import { callerOf } from '../../request-context.ts';

/**
 * Key-required routes answer keyless callers with the spec's exact 401 body: the export/SQL one
 * (`flat`), or the connected-sheet `{error:"Unauthorized", message:"No token provided"}` (`sheet`).
 */
export function requireKey({ body = 'flat' }: { body?: 'flat' | 'sheet' } = {}): RequestHandler {
  const code = body === 'sheet' ? ErrorCode.SHEET_AUTH_REQUIRED : ErrorCode.AUTH_REQUIRED;
  return function requireApiKey(req, _res, next) {
    if (callerOf(req).kind !== 'account') throw new ApiError(code);
    next();
  };
}
