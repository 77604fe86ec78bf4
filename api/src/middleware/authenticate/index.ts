import type { Request, Response } from 'express';
import { queryToken } from '@uda/shared/logger';
import type { KeyStore } from '../../keys/store.ts';
import { clientIp, setCaller } from '../../request-context.ts';

/** Sets the caller of a request with a valid key; resolves once that is decided. */
export type Authenticate = (req: Request, res: Response) => Promise<void>;

/**
 * Authentication (SPEC Authentication). The key comes from `Authorization: Bearer`, or from the
 * `token` query parameter only where `queryToken` is set (the routes SPEC Authentication §2 lists).
 * An invalid, revoked or deactivated key leaves the caller anonymous; this never answers 401 itself.
 * A step of each route's entry (`registerRoutes`), not a middleware layer of its own.
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
  return async function authenticateCaller(req, res) {
    const key = bearerKey(req) ?? (queryToken ? tokenParam(req) : undefined);
    let resolved = key ? keys.cached(key) : undefined;
    if (key && resolved === undefined) {
      await beforeLookup(req, res);
      resolved = await keys.resolve(key);
    }
    if (resolved) {
      setCaller(req, { kind: 'account', ip: clientIp(req), ...resolved });
      keys.touch(resolved.keyId);
    }
  };
}

function bearerKey(req: Request): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '');
  return match?.[1];
}

/** The same parser the access log's redactor uses: a token it would not redact is never accepted. */
function tokenParam(req: Request): string | undefined {
  return queryToken(req.originalUrl);
}
