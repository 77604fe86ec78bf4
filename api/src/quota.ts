/**
 * Quota arithmetic for the account daily caps (DECISIONS §4: the calendar day, UTC). Plain functions.
 */

const DAY_MS = 86_400_000;

/**
 * The UTC day last asked about: every capped request asks for its day, and formatting a date to
 * cut the day out of it allocates a string each time. A time inside [startMs, startMs + DAY_MS)
 * reuses it, any other time (the next day, a clock set back) computes its own, so the answer never
 * depends on the order of the calls: it is right across midnight without a timer.
 */
let cachedDay = { startMs: 0, day: '1970-01-01' };

function dayOf(ms: number): { startMs: number; day: string } {
  if (ms >= cachedDay.startMs && ms < cachedDay.startMs + DAY_MS) return cachedDay;
  const startMs = ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS);
  // toISOString throws a RangeError on an invalid date, as it always did here.
  cachedDay = { startMs, day: new Date(startMs).toISOString().slice(0, 10) };
  return cachedDay;
}

/** `2026-11-22`: the key suffix that makes a counter belong to one UTC day. */
export function utcDay(now: Date): string {
  return dayOf(now.getTime()).day;
}

/** Seconds until the next UTC midnight, at least 1. */
export function secondsUntilUtcMidnight(now: Date): number {
  const ms = now.getTime();
  return Math.max(1, Math.ceil((dayOf(ms).startMs + DAY_MS - ms) / 1000));
}

/** Remaining requests never reported below zero, whatever the counter says. */
export function remainingOf(limit: number, consumed: number): number {
  return Math.max(0, Math.min(limit, limit - consumed));
}

/** Unix seconds when a window that ends in `msBeforeNext` resets. */
export function resetEpochS(now: Date, msBeforeNext: number): number {
  return Math.ceil((now.getTime() + Math.max(0, msBeforeNext)) / 1000);
}
