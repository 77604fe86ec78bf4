/**
 * Quota arithmetic for the account daily caps (DECISIONS §4: the calendar day, UTC). Plain functions.
 */

/** `2026-11-22`: the key suffix that makes a counter belong to one UTC day. */
export function utcDay(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/** Seconds until the next UTC midnight, at least 1. */
export function secondsUntilUtcMidnight(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

/** Remaining requests never reported below zero, whatever the counter says. */
export function remainingOf(limit: number, consumed: number): number {
  return Math.max(0, Math.min(limit, limit - consumed));
}

/** Unix seconds when a window that ends in `msBeforeNext` resets. */
export function resetEpochS(now: Date, msBeforeNext: number): number {
  return Math.ceil((now.getTime() + Math.max(0, msBeforeNext)) / 1000);
}
