import { describe, expect, it } from '@jest/globals';
import { remainingOf, resetEpochS, secondsUntilUtcMidnight, utcDay } from './quota.ts';

describe('quota', () => {
  it('uses the UTC calendar day', () => {
    expect(utcDay(new Date('2026-11-22T23:59:59Z'))).toBe('2026-11-22');
    expect(secondsUntilUtcMidnight(new Date('2026-11-22T23:59:00Z'))).toBe(60);
    expect(secondsUntilUtcMidnight(new Date('2026-11-22T00:00:00Z'))).toBe(86_400);
  });

  it('never reports remaining below zero or above the limit', () => {
    expect(remainingOf(50, 51)).toBe(0);
    expect(remainingOf(50, -3)).toBe(50);
    expect(remainingOf(50, 10)).toBe(40);
  });

  it('reports the reset as Unix seconds', () => {
    expect(resetEpochS(new Date(1_000_000), 1_500)).toBe(1_002);
  });
});
