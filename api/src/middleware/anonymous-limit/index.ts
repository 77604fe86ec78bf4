import type { Response } from 'express';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { ApiError } from '../../errors/api-error.ts';
import { ErrorCode } from '../../errors/codes.ts';
import type { Metrics } from '../../metrics.ts';
import { remainingOf, resetEpochS } from '../../quota.ts';
import type { LimiterBackend } from '../../limiter/types.ts';
import { callerOf, setBeforeErrorAnswer } from '../../request-context.ts';
import { type CounterGuard, type GuardHandler, guardHandler } from '../counters/index.ts';

/**
 * The anonymous allowance (SPEC Limits; DECISIONS §4): `points` per window per IP, counting only 2xx
 * answers. It takes a count up front (so concurrent requests can't overshoot), never counts a
 * refused request, and gives the count back when the answer is not a 2xx or never completed.
 * Authenticated callers pass untouched, and so does a HEAD: it delivers no row, so it takes
 * nothing (DECISIONS §3). The count is taken with the burst limit's in one call (`counters/`).
 */
export function anonymousLimit(options: AnonymousLimitOptions & { backend: LimiterBackend }): GuardHandler {
  return guardHandler(options.backend, anonymousGuard(options));
}

export interface AnonymousLimitOptions {
  counter: RateLimiterAbstract;
  points?: number;
  metrics?: Metrics;
  now?: () => Date;
}

export function anonymousGuard({ counter, points = 50, metrics, now = () => new Date() }: AnonymousLimitOptions): CounterGuard {
  if (counter.points !== points) throw new RangeError(`anonymous counter allows ${counter.points} points, expected ${points}`);
  const limitText = String(points);
  return function anonymousStep(req, res) {
    const caller = callerOf(req);
    if (caller.kind !== 'anonymous' || req.method === 'HEAD') return undefined;
    return {
      take: { counter, key: caller.ip, refundIfOver: true },
      apply(result) {
        const remaining = String(remainingOf(points, result.consumed));
        const resetS = String(resetEpochS(now(), result.msBeforeNext));
        // setHeader each, not `res.set` of an object: this runs on every anonymous request.
        res.setHeader('X-RateLimit-Limit', limitText);
        res.setHeader('X-RateLimit-Remaining', remaining);
        res.setHeader('X-RateLimit-Reset', resetS);
        if (result.over) {
          metrics?.rateLimitRejections.inc({ kind: 'anonymous' });
          const headers = { 'X-RateLimit-Limit': limitText, 'X-RateLimit-Remaining': remaining, 'X-RateLimit-Reset': resetS };
          throw new ApiError(ErrorCode.REQUEST_LIMIT_EXCEEDED, { limit: points }, headers);
        }
        let givenBack: Promise<void> | undefined;
        const giveBackOnce = () => (givenBack ??= giveBack(counter, caller.ip));
        // An error answer waits for its give-back, so the caller's next request never finds the
        // count still taken, and its X-RateLimit-Remaining counts it out (the window and its reset
        // are unchanged); a response that breaks gives it back on close ('close' is emitted once:
        // `on` does it without `once`'s wrapper).
        setBeforeErrorAnswer(req, async () => {
          await giveBackOnce();
          res.setHeader('X-RateLimit-Remaining', String(remainingOf(points, result.consumed - 1)));
        });
        res.on('close', () => {
          if (!succeeded(res)) void giveBackOnce();
        });
      },
    };
  };
}

/** X-RateLimit-* of the anonymous allowance after a take that brought the count to `consumed`. */
function allowanceHeaders(points: number, consumed: number, msBeforeNext: number, now: Date): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(points),
    'X-RateLimit-Remaining': String(remainingOf(points, consumed)),
    'X-RateLimit-Reset': String(resetEpochS(now, msBeforeNext)),
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
  const headers = allowanceHeaders(points, result.consumedPoints, result.msBeforeNext, now);
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
