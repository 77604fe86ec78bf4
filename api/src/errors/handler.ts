/**
 * The one Express error handler and the unknown-path handler. Anything that is not an ApiError is
 * logged and answered as a 500 without its text, unless a store blinked (`unavailable.ts`: a 503).
 */
import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from '@uda/shared/logger';
import type { Metrics } from '../metrics.ts';
import { redactUrl } from '@uda/shared/logger';
import { callerOf, settleBeforeErrorAnswer, styleOf } from '../request-context.ts';
import { ApiError } from './api-error.ts';
import { bodyFor } from './body.ts';
import { ErrorCode } from './codes.ts';
import { asApiError } from './unavailable.ts';

export function notFound(): RequestHandler {
  return function notFoundHandler(req, _res, next) {
    next(new ApiError(ErrorCode.NOT_FOUND_PATH, { message: `Cannot ${req.method} ${req.path}` }));
  };
}

export function errorHandler({ logger, metrics }: { logger: Logger; metrics?: Metrics }): ErrorRequestHandler {
  return async function apiErrorHandler(err: unknown, req, res, next) {
    if (res.headersSent) {
      // A stream broke after the status went out; the only thing left to do is end it.
      logger.warn({ err, url: redactUrl(req.originalUrl) }, 'error after headers were sent');
      next(err);
      return;
    }
    await settleBeforeErrorAnswer(req);
    const error = toApiError(err);
    metrics?.failedWith(error);
    if (error.code === ErrorCode.INTERNAL_ERROR) {
      logger.error({ err, url: redactUrl(req.originalUrl), requestId: res.getHeader('x-request-id') }, 'unexpected error');
    }
    const ctx = { style: styleOf(req), accountState: callerOf(req).kind === 'account' ? 'authenticated' : 'anonymous' } as const;
    // Errors are never billed (DECISIONS §3): whatever a handler set before it failed, say so.
    if (callerOf(req).kind === 'account') res.setHeader('X-Credit-Cost', '0');
    res.status(error.status).set(error.headers);
    if (error.code === ErrorCode.RATE_LIMITED && prefersText(req)) {
      res.type('text/plain').send(bodyFor(error, ctx).message as string);
      return;
    }
    res.json(bodyFor(error, ctx));
  };
}

function toApiError(err: unknown): ApiError {
  // body-parser and friends mark client faults with a 4xx status; a blinking store is a 503; everything else is ours.
  const status = (err as { status?: unknown } | null)?.status;
  if (!(err instanceof ApiError) && typeof status === 'number' && status >= 400 && status < 500) {
    return new ApiError(ErrorCode.INVALID_INPUT, { message: 'The request could not be read.' });
  }
  return asApiError(err);
}

/** DECISIONS §4: text/plain when the client's Accept prefers it over JSON. */
function prefersText(req: Parameters<RequestHandler>[0]): boolean {
  return req.accepts(['application/json', 'text/plain']) === 'text/plain';
}
