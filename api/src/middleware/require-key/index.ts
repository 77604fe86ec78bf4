import type { RequestHandler } from 'express';
import { ApiError } from '../../errors/api-error.ts';
import { ErrorCode } from '../../errors/codes.ts';
import { callerOf } from '../../request-context.ts';

/**
 * Key-required routes answer keyless callers with the spec's exact 401 body: the export/SQL one
 * (`flat`), or the connected-sheet `{error:"Unauthorized", message:"No token provided"}` (`sheet`).
 * With `verified`, an account that signed up itself and has not verified its email yet gets 403
 * EMAIL_NOT_VERIFIED (SQL, exports and sheet uploads, DECISIONS §5 "Email").
 */
export function requireKey({ body = 'flat', verified = false }: { body?: 'flat' | 'sheet'; verified?: boolean } = {}): RequestHandler {
  const code = body === 'sheet' ? ErrorCode.SHEET_AUTH_REQUIRED : ErrorCode.AUTH_REQUIRED;
  return function requireApiKey(req, _res, next) {
    const caller = callerOf(req);
    if (caller.kind !== 'account') throw new ApiError(code);
    if (verified && !caller.emailVerified) throw new ApiError(ErrorCode.EMAIL_NOT_VERIFIED);
    next();
  };
}
