import { describe, expect, it } from '@jest/globals';
import { SIGNIN_LIMITS, signinDelayMs } from './signin-limit.ts';

describe('signinDelayMs', () => {
  const { freeFailures, firstMs, maxMs } = SIGNIN_LIMITS.delay;

  it('adds no delay for the first few failures for an email', () => {
    for (let f = 0; f <= freeFailures; f++) expect(signinDelayMs(f)).toBe(0);
  });

  it('grows with every further failure, up to a cap', () => {
    expect(signinDelayMs(freeFailures + 1)).toBe(firstMs);
    expect(signinDelayMs(freeFailures + 2)).toBe(2 * firstMs);
    expect(signinDelayMs(freeFailures + 3)).toBe(4 * firstMs);
    expect(signinDelayMs(10_000)).toBe(maxMs);
  });
});
