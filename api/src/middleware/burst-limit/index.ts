import type { RequestHandler } from 'express';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { ApiError } from '../../errors/api-error.ts';
import { ErrorCode } from '../../errors/codes.ts';
import type { Metrics } from '../../metrics.ts';
import { clientIp } from '../../request-context.ts';

/**
 * Burst limit (SPEC Limits; DECISIONS §4): `points` per `windowS` per IP, on every route, before
 * authentication. The counter is a RateLimiterRedis with a memory insurance limiter, or a
 * RateLimiterMemory in the embedded default. RateLimit-* and Retry-After go on the 429 only, so
 * they never clash with the daily caps' RateLimit-* on export routes.
 */
export function burstLimit({ counter, points = 100, metrics }: { counter: RateLimiterAbstract; points?: number; metrics?: Metrics }): RequestHandler {
  if (counter.points !== points) throw new RangeError(`burst counter allows ${counter.points} points, expected ${points}`);
  return async function burstLimitCheck(req, _res, next) {
    try {
      await counter.consume(clientIp(req));
      next();
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error;
      metrics?.rateLimitRejections.inc({ kind: 'burst' });
      const resetS = Math.max(1, Math.ceil(error.msBeforeNext / 1000));
      throw new ApiError(ErrorCode.RATE_LIMITED, {}, {
        'RateLimit-Limit': String(points),
        'RateLimit-Remaining': '0',
        'RateLimit-Reset': String(resetS),
        'Retry-After': String(resetS),
      });
    }
  };
}
