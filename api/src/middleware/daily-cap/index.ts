import type { Request, RequestHandler, Response } from 'express';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { ApiError } from '../../errors/api-error.ts';
import { ErrorCode } from '../../errors/codes.ts';
import type { Metrics } from '../../metrics.ts';
import { remainingOf, secondsUntilUtcMidnight, utcDay } from '../../quota.ts';
import { callerOf } from '../../request-context.ts';
import { giveBack } from '../anonymous-limit/index.ts';

export type DailyCapKind = 'export' | 'sheet';

export interface DailyCapOptions {
  /** A counter whose duration outlives a day; keys carry the UTC date, so the day is the window. */
  counter: RateLimiterAbstract;
  kind: DailyCapKind;
  limit?: number;
  metrics?: Metrics;
  now?: () => Date;
}

/**
 * Per-account daily caps (SPEC Limits; DECISIONS §4): export/SQL and connected sheets, 1,000 per
 * UTC day each, with RateLimit-* headers and Retry-After on the 429. Use the middleware where every
 * request counts; call `consumeDailyCap` from a handler where only some do (a cached re-read or a
 * HEAD doesn't).
 */
export function dailyCap(options: DailyCapOptions): RequestHandler {
  if ((options.limit ?? 1_000) > options.counter.points) throw new RangeError('daily cap counter is smaller than the cap');
  return async function dailyCapCheck(req, res, next) {
    await consumeDailyCap(options, req, res);
    next();
  };
}

/** Takes one count; returns how to give it back when the request then turns out not to count. */
export async function consumeDailyCap(options: DailyCapOptions, req: Request, res: Response): Promise<() => Promise<void>> {
  const { counter, kind, limit = 1_000, metrics, now = () => new Date() } = options;
  const caller = callerOf(req);
  if (caller.kind !== 'account') return async () => undefined;
  const at = now();
  const key = `${caller.accountId}:${utcDay(at)}`;
  const resetS = secondsUntilUtcMidnight(at);
  let consumed: number;
  try {
    consumed = (await counter.consume(key)).consumedPoints;
  } catch (error) {
    if (!(error instanceof RateLimiterRes)) throw error;
    consumed = error.consumedPoints;
  }
  const headers = {
    'RateLimit-Limit': String(limit),
    'RateLimit-Remaining': String(remainingOf(limit, consumed)),
    'RateLimit-Reset': String(resetS),
  };
  res.set(headers);
  if (consumed > limit) {
    metrics?.rateLimitRejections.inc({ kind: `${kind}_daily` });
    const code = kind === 'export' ? ErrorCode.EXPORT_LIMIT_EXCEEDED : ErrorCode.SHEET_LIMIT_EXCEEDED;
    throw new ApiError(code, {}, { ...headers, 'Retry-After': String(resetS) });
  }
  return async () => {
    await giveBack(counter, key);
    res.setHeader('RateLimit-Remaining', String(remainingOf(limit, consumed - 1)));
  };
}

/** Requests left today, for the usage route. */
export async function dailyCapRemaining(options: Pick<DailyCapOptions, 'counter' | 'limit' | 'now'>, accountId: string): Promise<number> {
  const { counter, limit = 1_000, now = () => new Date() } = options;
  const current = await counter.get(`${accountId}:${utcDay(now())}`);
  return remainingOf(limit, current?.consumedPoints ?? 0);
}
