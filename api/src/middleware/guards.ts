/**
 * The counters of the route limits and the ready-made guards the route declarations list
 * (`guards: (deps) => [...]`): built once by the composition root (`services.ts`), handed to each
 * route as the part of `guards` it names.
 */
import type { RequestHandler } from 'express';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { type Billing, requireCredit } from '../billing/index.ts';
import type { LimiterBackend } from '../limiter/types.ts';
import type { Limits } from '../limits.ts';
import type { Metrics } from '../metrics.ts';
import { anonymousLimit } from './anonymous-limit/index.ts';
import { burstGuard } from './burst-limit/index.ts';
import type { CounterGuard } from './counters/index.ts';
import { type DailyCapOptions, dailyCap } from './daily-cap/index.ts';
import { requireKey } from './require-key/index.ts';

export interface Counters {
  readonly burst: RateLimiterAbstract;
  readonly anonymous: RateLimiterAbstract;
  readonly exportDaily: RateLimiterAbstract;
  readonly sheetDaily: RateLimiterAbstract;
}

/** Ready-made route-limit and metering middleware for route definitions. */
export interface Guards {
  /** The burst limit, taken with a route's own limits (`routes/mount.ts`). */
  readonly burst: CounterGuard;
  readonly anonymousLimit: RequestHandler;
  /** A key of an account with a verified email: SQL and exports (DECISIONS §5 "Email"). */
  readonly requireKey: RequestHandler;
  /** Any key: the connected-sheet routes that read or delete. */
  readonly requireSheetKey: RequestHandler;
  /** A key of an account with a verified email: sheet uploads and sheet SQL. */
  readonly requireVerifiedSheetKey: RequestHandler;
  readonly exportCap: RequestHandler;
  readonly sheetCap: RequestHandler;
  readonly requireCredit: RequestHandler;
  readonly exportCapOptions: DailyCapOptions;
  readonly sheetCapOptions: DailyCapOptions;
}

export function buildCounters(backend: LimiterBackend, limits: Limits): Counters {
  // Daily counters key on the UTC date, so their TTL only has to outlive the day.
  const day = 25 * 60 * 60;
  return {
    burst: backend.counter({ name: 'burst', points: limits.burst.points, durationS: limits.burst.windowS }),
    anonymous: backend.counter({ name: 'anon', points: limits.anonymous.points, durationS: limits.anonymous.windowS }),
    exportDaily: backend.counter({ name: 'export-day', points: limits.exportDaily, durationS: day }),
    sheetDaily: backend.counter({ name: 'sheet-day', points: limits.sheetDaily, durationS: day }),
  };
}

export function buildGuards(s: { backend: LimiterBackend; counters: Counters; limits: Limits; metrics: Metrics; billing: Billing }): Guards {
  const { backend, counters, limits, metrics } = s;
  const exportCapOptions: DailyCapOptions = { backend, counter: counters.exportDaily, kind: 'export', limit: limits.exportDaily, metrics };
  const sheetCapOptions: DailyCapOptions = { backend, counter: counters.sheetDaily, kind: 'sheet', limit: limits.sheetDaily, metrics };
  return {
    burst: burstGuard({ counter: counters.burst, points: limits.burst.points, metrics }),
    anonymousLimit: anonymousLimit({ backend, counter: counters.anonymous, points: limits.anonymous.points, metrics }),
    requireKey: requireKey({ body: 'flat', verified: true }),
    requireSheetKey: requireKey({ body: 'sheet' }),
    requireVerifiedSheetKey: requireKey({ body: 'sheet', verified: true }),
    exportCap: dailyCap(exportCapOptions),
    sheetCap: dailyCap(sheetCapOptions),
    requireCredit: requireCredit(s.billing),
    exportCapOptions,
    sheetCapOptions,
  };
}
