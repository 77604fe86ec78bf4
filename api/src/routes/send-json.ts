import type { Request, Response } from 'express';

/**
 * Sends JSON text as `res.json` would: the same headers in the same order, the same bytes. Express
 * gets there through `res.set` twice for the Content-Type (a MIME lookup, then parsing and
 * formatting it again to add the charset), three settings lookups and a freshness check, on every
 * answer. For an answer that set no Content-Type of its own: a conditional request (the only kind
 * Express's freshness check can turn into a 304) still goes through Express's `send`.
 */
export function sendJson(req: Request, res: Response, json: string): void {
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  if (req.headers['if-none-match'] !== undefined || req.headers['if-modified-since'] !== undefined) {
    res.send(json);
    return;
  }
  res.setHeader('Content-Length', Buffer.byteLength(json));
  if (req.method === 'HEAD') res.end();
  else res.end(json);
}
