import { describe, expect, it } from '@jest/globals';
import { remainingOf, resetEpochS, secondsUntilUtcMidnight, utcDay } from './quota.ts';

describe('quota', () => {
  it('uses the UTC calendar day', () => {
    expect(utcDay(new Date('2026-11-22T23:59:59Z'))).toBe('2026-11-22');
    expect(secondsUntilUtcMidnight(new Date('2026-11-22T23:59:00Z'))).toBe(60);
    expect(secondsUntilUtcMidnight(new Date('2026-11-22T00:00:00Z'))).toBe(86_400);
  });

  it('gives each instant its own UTC day whatever the order of the calls: across midnight, a clock set back, leap days', () => {
    // An injected clock: the instants a process could see, in the order it could see them.
    const clock = [
      '2026-11-22T23:59:59.999Z',
      '2026-11-23T00:00:00.000Z',
      '2026-11-22T23:59:59.999Z',
      '2026-11-22T00:00:00.000Z',
      '2026-11-21T23:59:59.999Z',
      '2028-02-29T12:00:00.000Z',
      '2028-03-01T00:00:00.000Z',
      '1969-12-31T23:59:59.999Z',
      '1970-01-01T00:00:00.000Z',
    ];
    for (const at of clock) {
      const now = new Date(at);
      expect(utcDay(now)).toBe(at.slice(0, 10));
      const nextMidnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
      expect(secondsUntilUtcMidnight(now)).toBe(Math.max(1, Math.ceil((nextMidnight - now.getTime()) / 1000)));
    }
    expect(secondsUntilUtcMidnight(new Date('2026-11-22T23:59:59.999Z'))).toBe(1);
    expect(() => utcDay(new Date(Number.NaN))).toThrow(RangeError);
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
