import type { RequestHandler } from 'express';

/** Headers browsers may read: ours, the rate-limit ones, and what range readers need. */
export const EXPOSED_HEADERS = [
  'X-Request-Id',
  'X-Credit-Cost',
  'X-Credits-Remaining',
  'X-Service-Cached',
  'X-Service-Query-Id',
  'X-Service-Rows-Charged',
  'X-Service-Usage',
  'X-Service-Success',
  'X-Service-Message',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Retry-After',
  'Content-Disposition',
  'Content-Range',
  'Accept-Ranges',
  'ETag',
  'Last-Modified',
].join(', ');

/**
 * Request headers browsers may send. Besides the key and content headers, the conditional ones
 * (RFC 9110 §13) that range readers such as DuckDB-Wasm send when they revalidate a file.
 */
export const ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Accept',
  'Range',
  'If-Range',
  'If-Match',
  'If-None-Match',
  'If-Modified-Since',
  'If-Unmodified-Since',
  'Mcp-Session-Id',
  'Mcp-Protocol-Version',
].join(', ');

/**
 * CORS for the public data routes. Preflights are answered here, before the burst limit, so a
 * browser's OPTIONS never spends the caller's allowance. Credentials are never allowed: keys travel
 * in the Authorization header, not cookies.
 */
export function cors({ origins = ['*'], maxAgeS = 600 }: { origins?: readonly string[]; maxAgeS?: number } = {}): RequestHandler {
  const any = origins.includes('*');
  return function corsHeaders(req, res, next) {
    const origin = req.get('origin');
    if (origin && (any || origins.includes(origin))) {
      res.setHeader('Access-Control-Allow-Origin', any ? '*' : origin);
      if (!any) res.vary('Origin');
      res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    }
    if (req.method === 'OPTIONS' && origin && req.get('access-control-request-method')) {
      res.setHeader('Access-Control-Allow-Methods', 'GET, HEAD, POST, DELETE, OPTIONS');
      res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      res.setHeader('Access-Control-Max-Age', String(maxAgeS));
      res.status(204).end();
      return;
    }
    next();
  };
}
