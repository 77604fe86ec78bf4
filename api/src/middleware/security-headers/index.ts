import type { ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';

/**
 * The security headers of every API answer: what helmet sets with the API's policy (the strictest
 * CSP, per OWASP's REST guidance, for a data API that serves no pages; resources readable by other
 * origins, with CORS deciding who), written out once. helmet built the same constant values but
 * walked thirteen small middleware per request to set them; `security-headers.test.ts` pins this
 * list to helmet's output. X-Powered-By is off at the app (`app.disable`).
 */
export const SECURITY_HEADERS: readonly (readonly [string, string])[] = [
  ['Content-Security-Policy', "default-src 'none';frame-ancestors 'none'"],
  ['Cross-Origin-Opener-Policy', 'same-origin'],
  ['Cross-Origin-Resource-Policy', 'cross-origin'],
  ['Origin-Agent-Cluster', '?1'],
  ['Referrer-Policy', 'no-referrer'],
  ['Strict-Transport-Security', 'max-age=31536000; includeSubDomains'],
  ['X-Content-Type-Options', 'nosniff'],
  ['X-DNS-Prefetch-Control', 'off'],
  ['X-Download-Options', 'noopen'],
  ['X-Frame-Options', 'SAMEORIGIN'],
  ['X-Permitted-Cross-Domain-Policies', 'none'],
  ['X-XSS-Protection', '0'],
];

export function setSecurityHeaders(res: ServerResponse): void {
  for (const [name, value] of SECURITY_HEADERS) res.setHeader(name, value);
}

export function securityHeaders(): RequestHandler {
  return function setApiSecurityHeaders(_req, res, next) {
    setSecurityHeaders(res);
    next();
  };
}
