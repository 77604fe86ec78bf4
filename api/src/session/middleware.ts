/**
 * Session middleware for the dashboard routes. They read only the session cookie, never an API key
 * (DECISIONS §10), and every state-changing route also needs the session's CSRF token in the
 * `X-CSRF-Token` header (synchronizer token: a cross-site page can neither read it nor set it).
 */
import { timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import type { AccountStore } from '../accounts/store.ts';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import { clientIp, setCaller, setStyle } from '../request-context.ts';
import { sessionIdOf } from './auth/cookies.ts';
import type { Session, SessionStore } from './store.ts';

export const CSRF_HEADER = 'x-csrf-token';

const sessions = new WeakMap<Request, Session>();

export function sessionOf(req: Request): Session {
  const session = sessions.get(req);
  if (!session) throw new ApiError(ErrorCode.SESSION_REQUIRED);
  return session;
}

/**
 * Loads the session, then makes its account the request's caller, so the shared handlers (sheets,
 * SQL) run for it exactly as they do for that account's key.
 */
export function requireSession({ store, accounts }: { store: SessionStore; accounts: AccountStore }): RequestHandler {
  return async function requireDashboardSession(req, _res, next) {
    setStyle(req, 'flat');
    const id = sessionIdOf(req);
    const session = id ? await store.session(id) : undefined;
    if (!session) throw new ApiError(ErrorCode.SESSION_REQUIRED);
    const account = await accounts.mustGet(session.accountId);
    sessions.set(req, session);
    setCaller(req, { kind: 'account', ip: clientIp(req), accountId: account.id, tier: account.tier, keyId: `session:${session.userId}`, legacy: false, emailVerified: account.emailVerified });
    next();
  };
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function requireCsrf(): RequestHandler {
  return function checkCsrf(req, _res, next) {
    if (SAFE_METHODS.has(req.method)) return next();
    const expected = Buffer.from(sessionOf(req).csrfToken);
    const sent = Buffer.from(req.get(CSRF_HEADER) ?? '');
    if (sent.length !== expected.length || !timingSafeEqual(sent, expected)) throw new ApiError(ErrorCode.CSRF_REJECTED);
    next();
  };
}
