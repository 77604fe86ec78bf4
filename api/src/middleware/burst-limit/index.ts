import type { Request, RequestHandler } from 'express';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { ApiError } from '../../errors/api-error.ts';
import { ErrorCode } from '../../errors/codes.ts';
import type { Metrics } from '../../metrics.ts';
import { clientIp, setBurstPending, takeBurstPending } from '../../request-context.ts';
import type { CounterGuard } from '../counters/index.ts';

/**
 * Burst limit (SPEC Limits; DECISIONS §4): `points` per `windowS` per IP, on every route. This
 * app-level step only marks the request; the count is taken with the route's own limit in one
 * Redis call (`mountPublicRoutes`), or alone before a key lookup that must reach PostgreSQL, or by
 * `burstGuard`'s handler in front of the unknown-path answer. So it still precedes any route work.
 */
export function deferBurstLimit(): RequestHandler {
  return function markBurstPending(req, _res, next) {
    setBurstPending(req);
    next();
  };
}

/**
 * One more request to count for `req` at the next take: each call of an MCP JSON-RPC batch is a
 * request to the burst limit (DECISIONS §4 "Every call counts"), the first taken with the route's.
 */
export function countAnotherRequest(req: Request): void {
  setBurstPending(req);
}

/**
 * Takes a pending burst count. The counter is a RateLimiterRedis with a memory insurance limiter,
 * or a RateLimiterMemory in the embedded default. RateLimit-* and Retry-After go on the 429 only, so
 * they never clash with the daily caps' RateLimit-* on export routes.
 */
export function burstGuard({ counter, points = 100, metrics }: { counter: RateLimiterAbstract; points?: number; metrics?: Metrics }): CounterGuard {
  if (counter.points !== points) throw new RangeError(`burst counter allows ${counter.points} points, expected ${points}`);
  return function burstStep(req) {
    if (!takeBurstPending(req)) return undefined;
    return {
      take: { counter, key: clientIp(req) },
      apply(result) {
        if (!result.over) return;
        metrics?.rateLimitRejections.inc({ kind: 'burst' });
        const resetS = Math.max(1, Math.ceil(result.msBeforeNext / 1000));
        throw new ApiError(ErrorCode.RATE_LIMITED, {}, {
          'RateLimit-Limit': String(points),
          'RateLimit-Remaining': '0',
          'RateLimit-Reset': String(resetS),
          'Retry-After': String(resetS),
        });
      },
    };
  };
}
