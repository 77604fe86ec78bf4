import { describe, expect, it } from '@jest/globals';
import {
  effectiveGrant,
  formatUsd,
  grantAfterTierChange,
  parseUsd,
  periodOf,
  splitCharge,
  usdNumber,
} from './money.ts';
import { priceMicro } from './prices.ts';

describe('money', () => {
  it('prices rows by class and tier (SPEC credits §3)', () => {
    expect(priceMicro('open', 'free', 1)).toBe(5_000);
    expect(priceMicro('open', 'pro', 10)).toBe(40_000);
    expect(priceMicro('encyclopedia', 'developer', 2)).toBe(30_000);
    expect(priceMicro('encyclopedia', 'pro', 1)).toBe(12_500);
    expect(priceMicro('open', 'free', 0)).toBe(0);
    expect(() => priceMicro('open', 'free', -1)).toThrow(RangeError);
  });

  it('formats decimal USD without trailing zeros', () => {
    expect(formatUsd(25_000)).toBe('0.025');
    expect(formatUsd(4_975_000)).toBe('4.975');
    expect(formatUsd(0)).toBe('0');
    expect(formatUsd(99_000_000)).toBe('99');
    expect(formatUsd(1)).toBe('0.000001');
    expect(usdNumber(12_500)).toBe(0.0125);
  });

  it('parses USD with up to six decimals', () => {
    expect(parseUsd('12.5')).toBe(12_500_000);
    expect(parseUsd('0.000001')).toBe(1);
    expect(() => parseUsd('-1')).toThrow(RangeError);
    expect(() => parseUsd('1.0000001')).toThrow(RangeError);
  });

  it('spends the grant first, then the top-off, never below zero', () => {
    expect(splitCharge(10, 5, 12)).toEqual({ fromGrant: 10, fromTopoff: 2 });
    expect(splitCharge(10, 5, 15)).toEqual({ fromGrant: 10, fromTopoff: 5 });
    expect(splitCharge(10, 5, 16)).toBeUndefined();
    expect(splitCharge(0, 5, 3)).toEqual({ fromGrant: 0, fromTopoff: 3 });
  });

  it('resets the grant lazily per UTC calendar month', () => {
    const now = new Date('2026-12-01T00:00:00Z');
    expect(periodOf(new Date('2026-11-30T23:59:59Z'))).toBe('2026-11');
    expect(effectiveGrant({ tier: 'free', grantMicro: 1, period: '2026-11' }, now)).toBe(5_000_000);
    expect(effectiveGrant({ tier: 'free', grantMicro: 1, period: '2026-12' }, now)).toBe(1);
  });

  it('applies plan changes at once', () => {
    expect(grantAfterTierChange(1_000_000, 'free', 'pro')).toBe(99_000_000);
    expect(grantAfterTierChange(50_000_000, 'pro', 'developer')).toBe(29_000_000);
    expect(grantAfterTierChange(1_000_000, 'pro', 'free')).toBe(1_000_000);
  });
});
