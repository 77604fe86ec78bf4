import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';

const SAFE_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** Every response carries `X-Request-Id`: the caller's, when it is a safe token, or a new UUID. */
export function requestId({ header = 'X-Request-Id', trustIncoming = true }: { header?: string; trustIncoming?: boolean } = {}): RequestHandler {
  return function setRequestId(req, res, next) {
    const incoming = req.get(header);
    res.setHeader(header, trustIncoming && incoming && SAFE_ID.test(incoming) ? incoming : randomUUID());
    next();
  };
}
