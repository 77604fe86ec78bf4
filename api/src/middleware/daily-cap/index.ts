import type { Request, Response } from 'express';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { ApiError } from '../../errors/api-error.ts';
import { ErrorCode } from '../../errors/codes.ts';
import type { Metrics } from '../../metrics.ts';
import { remainingOf, secondsUntilUtcMidnight, utcDay } from '../../quota.ts';
import type { LimiterBackend } from '../../limiter/types.ts';
import { callerOf } from '../../request-context.ts';
import { type CounterGuard, type GuardHandler, guardHandler } from '../counters/index.ts';
import { giveBack } from '../anonymous-limit/index.ts';

export type DailyCapKind = 'export' | 'sheet';

export interface DailyCapOptions {
  /** A counter whose duration outlives a day; keys carry the UTC date, so the day is the window. */
  counter: RateLimiterAbstract;
  /** The backend that made `counter`, which takes the counts. */
  backend: LimiterBackend;
  kind: DailyCapKind;
  limit?: number;
  metrics?: Metrics;
  now?: () => Date;
}

/**
 * Per-account daily caps (SPEC Limits; DECISIONS §4): export/SQL and connected sheets, 1,000 per
 * UTC day each, with RateLimit-* headers and Retry-After on the 429. Use the middleware where every
 * request counts (its count is taken with the burst limit's in one call, `counters/`); call
 * `consumeDailyCap` from a handler where only some do (a cached re-read or a HEAD doesn't).
 */
export function dailyCap(options: DailyCapOptions): GuardHandler {
  return guardHandler(options.backend, dailyCapGuard(options));
}

export function dailyCapGuard(options: DailyCapOptions): CounterGuard {
  const { counter, kind, limit = 1_000, metrics, now = () => new Date() } = options;
  if (limit > counter.points) throw new RangeError('daily cap counter is smaller than the cap');
  const limitText = String(limit);
  return function dailyCapStep(req, res) {
    const caller = callerOf(req);
    if (caller.kind !== 'account') return undefined;
    const at = now();
    const resetS = secondsUntilUtcMidnight(at);
    return {
      take: { counter, key: `${caller.accountId}:${utcDay(at)}` },
      apply({ consumed }) {
        const remaining = String(remainingOf(limit, consumed));
        const reset = String(resetS);
        // setHeader each, not `res.set` of an object: this runs on every capped request.
        res.setHeader('RateLimit-Limit', limitText);
        res.setHeader('RateLimit-Remaining', remaining);
        res.setHeader('RateLimit-Reset', reset);
        if (consumed <= limit) return;
        metrics?.rateLimitRejections.inc({ kind: `${kind}_daily` });
        const code = kind === 'export' ? ErrorCode.EXPORT_LIMIT_EXCEEDED : ErrorCode.SHEET_LIMIT_EXCEEDED;
        throw new ApiError(code, {}, { 'RateLimit-Limit': limitText, 'RateLimit-Remaining': remaining, 'RateLimit-Reset': reset, 'Retry-After': reset });
      },
    };
  };
}

/** Takes one count; returns how to give it back when the request then turns out not to count. */
export async function consumeDailyCap(options: DailyCapOptions, req: Request, res: Response): Promise<() => Promise<void>> {
  const step = dailyCapGuard(options)(req, res);
  if (!step) return async () => undefined;
  const [result] = await options.backend.take([step.take]);
  if (result) step.apply(result);
  const consumed = result?.consumed ?? 0;
  return async () => {
    await giveBack(options.counter, step.take.key);
    res.setHeader('RateLimit-Remaining', String(remainingOf(options.limit ?? 1_000, consumed - 1)));
  };
}

/** Requests left today, for the usage route. */
export async function dailyCapRemaining(options: Pick<DailyCapOptions, 'counter' | 'limit' | 'now'>, accountId: string): Promise<number> {
  const { counter, limit = 1_000, now = () => new Date() } = options;
  const current = await counter.get(`${accountId}:${utcDay(now())}`);
  return remainingOf(limit, current?.consumedPoints ?? 0);
}
