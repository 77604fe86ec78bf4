/**
 * The session cookie: httpOnly, SameSite=Strict, scoped to /dashboard, and Secure whenever the
 * request came over HTTPS (`req.secure` honours the configured trust-proxy hops).
 */
import type { Request, Response } from 'express';
import { SESSION_TTL_MS } from './store.ts';

export const SESSION_COOKIE = 'uda_session';
const COOKIE_PATH = '/dashboard';

export function sessionIdOf(req: Request): string | undefined {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === SESSION_COOKIE) {
      const id = value.join('=');
      return /^[A-Za-z0-9_-]{43}$/.test(id) ? id : undefined;
    }
  }
  return undefined;
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
