import type { RequestHandler } from 'express';
import { type Logger, redactUrl } from '@uda/shared/logger';
import type { Metrics } from '../../metrics.ts';
import { routeLabelOf } from '../../request-context.ts';

/**
 * One log line and one histogram sample per request. URLs are logged with `token=` redacted; no
 * header is logged, so the Authorization header can't leak. The route label is the template
 * (`/api/v1/auth/usage`, `/{source}/{keywords}`), never the raw path, to keep label cardinality
 * bounded.
 */
export function accessLog({ logger, metrics }: { logger: Logger; metrics?: Metrics }): RequestHandler {
  return function logRequest(req, res, next) {
    // A number, not hrtime's bigint: two heap objects less per request. 'close' is emitted once, so
    // `on` does what `once` did without its wrapper.
    const start = performance.now();
    res.on('close', () => {
      const seconds = (performance.now() - start) / 1e3;
      const route = routeLabelOf(req) ?? 'unmatched';
      metrics?.httpDuration.observe(
        { method: req.method, route, status_class: `${Math.floor(res.statusCode / 100)}xx` },
        seconds,
      );
      if (logger.isLevelEnabled('info')) {
        logger.info(
          {
            requestId: res.getHeader('x-request-id'),
            method: req.method,
            url: redactUrl(req.originalUrl),
            status: res.statusCode,
            ms: Math.round(seconds * 1e4) / 10,
            ip: req.ip,
          },
          'request',
        );
      }
    });
    next();
  };
}
