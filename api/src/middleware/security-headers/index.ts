import { OutgoingMessage, type ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';

/**
 * The security headers of every API answer: what helmet sets with the API's policy (the strictest
 * CSP, per OWASP's REST guidance, for a data API that serves no pages; resources readable by other
 * origins, with CORS deciding who), written out once. `security-headers.test.ts` pins this list to
 * helmet's output. X-Powered-By is off at the app (`app.disable`).
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

/** The header lines as they go on the wire, built once. */
const BLOCK = SECURITY_HEADERS.map(([name, value]) => `${name}: ${value}\r\n`).join('');
const LOWER_NAMES = SECURITY_HEADERS.map(([name]) => name.toLowerCase());

/**
 * Node's own header serialiser. Every header set with `setHeader` is validated, lowercased, stored
 * and then serialised one by one; the twelve constant ones cost as much as the rest of a small
 * answer's headers together. So they go out as one precomputed block, appended to the status line
 * as the answer's head is serialised. `_storeHeader` has had this signature since Node 0.x; the
 * test pins the bytes on the wire against helmet, so a change in Node would fail it.
 */
type StoreHeader = (this: ServerResponse, firstLine: string, headers: unknown) => void;
const nodeStoreHeader = (OutgoingMessage.prototype as unknown as { _storeHeader: StoreHeader })._storeHeader;

function storeHeaderWithSecurityBlock(this: ServerResponse, firstLine: string, headers: unknown): void {
  nodeStoreHeader.call(this, firstLine + blockFor(this, headers), headers);
}

/**
 * The block, less any header the answer set itself (the docs page's own CSP): a later setHeader
 * wins, exactly as when these were set one by one first.
 */
function blockFor(res: ServerResponse, headers: unknown): string {
  const own = headerNamesOf(res, headers);
  if (own === undefined) return BLOCK;
  let block = '';
  SECURITY_HEADERS.forEach(([name, value], i) => {
    if (!own.has(LOWER_NAMES[i] as string)) block += `${name}: ${value}\r\n`;
  });
  return block;
}

/** Lowercased names of the answer's headers when one of the block's is among them, else undefined. */
function headerNamesOf(res: ServerResponse, headers: unknown): Set<string> | undefined {
  if (headers === null || headers === undefined) return undefined;
  // The usual case: the answer's own table, which setHeader filled: lowercased names as keys.
  if (!Array.isArray(headers) && isTracked(res, headers as object)) {
    const table = headers as Record<string, unknown>;
    for (const name of LOWER_NAMES) if (table[name] !== undefined) return new Set(Object.keys(table));
    return undefined;
  }
  // writeHead(status, headers) with nothing set before: the names are in its argument, any case.
  const names = Array.isArray(headers)
    ? (headers as unknown[]).flatMap((entry, i) => (Array.isArray(entry) ? [String(entry[0])] : i % 2 === 0 ? [String(entry)] : []))
    : Object.keys(headers as object);
  const lower = new Set(names.map((name) => name.toLowerCase()));
  return LOWER_NAMES.some((name) => lower.has(name)) ? lower : undefined;
}

/** Whether `headers` is the answer's own table (what setHeader filled), not writeHead's argument. */
function isTracked(res: ServerResponse, headers: object): boolean {
  for (const name in headers) return res.hasHeader(name);
  return false;
}

/** Sends the security headers on `res`, as one precomputed block. */
export function setSecurityHeaders(res: ServerResponse): void {
  (res as unknown as { _storeHeader: StoreHeader })._storeHeader = storeHeaderWithSecurityBlock;
}

export function securityHeaders(): RequestHandler {
  return function setApiSecurityHeaders(_req, res, next) {
    setSecurityHeaders(res);
    next();
  };
}
