import type { RequestHandler } from 'express';

/**
 * Synchronous middleware run as one Express layer. Every layer the router walks costs a path
 * match, a params step and a dispatch; the steps every request takes (request id, access log,
 * security headers, then CORS and the burst mark) cost less as one. Each handler must either call
 * `next` before it returns or end the response (a CORS preflight); one that would call `next`
 * later is a programming error, reported as such rather than left to hang the request.
 */
export function oneLayer(...handlers: readonly RequestHandler[]): RequestHandler {
  return function runAsOneLayer(req, res, next) {
    for (const handler of handlers) {
      nextCalled = false;
      nextError = undefined;
      void handler(req, res, syncNext);
      if (nextError !== undefined) return next(nextError);
      if (nextCalled) continue;
      if (res.writableEnded) return;
      return next(new Error(`${handler.name || 'a handler'} neither called next nor answered: oneLayer takes synchronous middleware only`));
    }
    next();
  };
}

// Module state instead of a callback per request: the handlers are synchronous, so a call's flags
// are read before any other request can set them.
let nextCalled = false;
let nextError: unknown;

function syncNext(error?: unknown): void {
  nextCalled = true;
  nextError = error;
}
