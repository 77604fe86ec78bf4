import type { Request, Response } from 'express';
import { queryToken } from '@uda/shared/logger';
import type { KeyStore, ResolvedKey } from '../../keys/store.ts';
import { clientIp, setCaller } from '../../request-context.ts';

/**
 * Sets the caller of a request with a valid key. Returns a promise only when deciding that must
 * wait (a key the cache can't answer); no key or a cached one is decided before it returns, so
 * the route's entry doesn't pay a promise and a microtask turn per request for nothing.
 */
export type Authenticate = (req: Request, res: Response) => Promise<void> | undefined;

/**
 * Authentication (SPEC Authentication). The key comes from `Authorization: Bearer`, or from the
 * `token` query parameter only where `queryToken` is set (the routes SPEC Authentication §2 lists).
 * An invalid, revoked or deactivated key leaves the caller anonymous; this never answers 401 itself.
 * A step of each route's entry (`mountPublicRoutes`), not a middleware layer of its own.
 */
export function authenticate({
  keys,
  queryToken = false,
  beforeLookup = async () => undefined,
}: {
  keys: KeyStore;
  queryToken?: boolean;
  /** Runs before a key is looked up in PostgreSQL (not for one the cache answers): the burst limit. */
  beforeLookup?: (req: Request, res: Response) => Promise<void>;
}): Authenticate {
  return function authenticateCaller(req, res) {
    const key = bearerKey(req) ?? (queryToken ? tokenParam(req) : undefined);
    if (!key) return undefined;
    const cached = keys.cached(key, req.socket);
    if (cached !== undefined) return void setAccount(req, keys, cached);
    return (async () => {
      await beforeLookup(req, res);
      setAccount(req, keys, await keys.resolve(key));
    })();
  };
}

function setAccount(req: Request, keys: KeyStore, resolved: ResolvedKey | null | undefined): void {
  if (!resolved) return;
  setCaller(req, { kind: 'account', ip: clientIp(req), ...resolved });
  keys.touch(resolved.keyId);
}

function bearerKey(req: Request): string | undefined {
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  return /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
}

/** The same parser the access log's redactor uses: a token it would not redact is never accepted. */
function tokenParam(req: Request): string | undefined {
  return queryToken(req.originalUrl);
}
