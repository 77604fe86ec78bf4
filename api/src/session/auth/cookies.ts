/**
 * The session cookie: httpOnly, SameSite=Strict, scoped to /dashboard, and Secure whenever the
 * request came over HTTPS (`req.secure` honours the configured trust-proxy hops).
 */
import { parse as parseCookies } from 'cookie';
import type { Request, Response } from 'express';
import { SESSION_TTL_MS } from '../store.ts';

export const SESSION_COOKIE = 'uda_session';
const COOKIE_PATH = '/dashboard';

export function sessionIdOf(req: Request): string | undefined {
  // Not decoded: a session id is plain base64url, so an encoded one is not ours.
  const id = parseCookies(req.get('cookie') ?? '', { decode: (value) => value })[SESSION_COOKIE];
  return id !== undefined && /^[A-Za-z0-9_-]{43}$/.test(id) ? id : undefined;
}

function attributes(req: Request, maxAgeS: number): string {
  return [`Path=${COOKIE_PATH}`, `Max-Age=${maxAgeS}`, 'HttpOnly', 'SameSite=Strict', ...(req.secure ? ['Secure'] : [])].join('; ');
}

export function setSessionCookie(req: Request, res: Response, id: string): void {
  res.append('Set-Cookie', `${SESSION_COOKIE}=${id}; ${attributes(req, Math.floor(SESSION_TTL_MS / 1000))}`);
}

export function clearSessionCookie(req: Request, res: Response): void {
  res.append('Set-Cookie', `${SESSION_COOKIE}=; ${attributes(req, 0)}`);
}
