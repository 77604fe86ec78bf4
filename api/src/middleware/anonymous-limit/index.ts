import type { RequestHandler, Response } from 'express';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { ApiError } from '../../errors/api-error.ts';
import { ErrorCode } from '../../errors/codes.ts';
import type { Metrics } from '../../metrics.ts';
import { remainingOf, resetEpochS } from '../../quota.ts';
import { callerOf } from '../../request-context.ts';

/**
 * The anonymous allowance (SPEC Limits; DECISIONS §4): `points` per window per IP, counting only 2xx
 * answers. It consumes up front (so concurrent requests can't overshoot) and gives the point back
 * when the answer is not a 2xx or never completed. Authenticated callers pass untouched, and so
 * does a HEAD: it delivers no row, so it takes nothing (DECISIONS §3).
 */
export function anonymousLimit({
  counter,
  points = 50,
  metrics,
  now = () => new Date(),
}: {
  counter: RateLimiterAbstract;
  points?: number;
  metrics?: Metrics;
  now?: () => Date;
}): RequestHandler {
  if (counter.points !== points) throw new RangeError(`anonymous counter allows ${counter.points} points, expected ${points}`);
  return async function anonymousLimitCheck(req, res, next) {
    const caller = callerOf(req);
    if (caller.kind !== 'anonymous' || req.method === 'HEAD') return next();
    const { headers, rejected } = await takeAllowance(counter, caller.ip, { points, now: now() });
    res.set(headers);
    if (rejected) {
      metrics?.rateLimitRejections.inc({ kind: 'anonymous' });
      throw new ApiError(ErrorCode.REQUEST_LIMIT_EXCEEDED, { limit: points }, headers);
    }
    res.once('close', () => {
      if (!succeeded(res)) void giveBack(counter, caller.ip);
    });
    next();
  };
}

/**
 * Takes `calls` points of an anonymous caller's allowance up front. Returns the X-RateLimit-*
 * headers and whether the allowance is spent; a refused take is given back, so it never counts.
 */
export async function takeAllowance(
  counter: RateLimiterAbstract,
  key: string,
  { points, calls = 1, now }: { points: number; calls?: number; now: Date },
): Promise<{ headers: Record<string, string>; rejected: boolean }> {
  let result: RateLimiterRes;
  let rejected = false;
  try {
    result = await counter.consume(key, calls);
  } catch (error) {
    if (!(error instanceof RateLimiterRes)) throw error;
    result = error;
    rejected = true;
  }
  const headers = {
    'X-RateLimit-Limit': String(points),
    'X-RateLimit-Remaining': String(remainingOf(points, result.consumedPoints)),
    'X-RateLimit-Reset': String(resetEpochS(now, result.msBeforeNext)),
  };
  if (rejected) await giveBack(counter, key, calls);
  return { headers, rejected };
}

function succeeded(res: Response): boolean {
  return res.writableFinished && res.statusCode >= 200 && res.statusCode < 300;
}

/** Reward, but never below zero: a window that expired meanwhile has nothing to give back. */
export async function giveBack(counter: RateLimiterAbstract, key: string, points = 1): Promise<void> {
  if (points <= 0) return;
  try {
    const current = await counter.get(key);
    const back = Math.min(points, current?.consumedPoints ?? 0);
    if (back > 0) await counter.reward(key, back);
  } catch {
    // The store is down: the insurance limiter already holds the count; losing a reward only errs strict.
  }
}
