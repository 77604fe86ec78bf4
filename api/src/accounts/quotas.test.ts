import { describe, expect, it } from '@jest/globals';
import { PAYMENT_LIMITS, SHEET_QUOTAS, pendingAllows, sheetQuotaProblem, topoffAmountProblem } from './quotas.ts';

describe('sheetQuotaProblem', () => {
  const quota = SHEET_QUOTAS.free;

  it('allows a new sheet while the count and bytes fit', () => {
    expect(sheetQuotaProblem(quota, { sheets: quota.sheets - 1, bytes: 0 }, { newSheet: true, bytes: quota.bytes })).toBeUndefined();
  });

  it('refuses one sheet more than the tier holds', () => {
    expect(sheetQuotaProblem(quota, { sheets: quota.sheets, bytes: 0 }, { newSheet: true, bytes: 1 })).toMatch(/at most 10 sheets/);
  });

  it('refuses bytes over the total, counting what a replace drops', () => {
    expect(sheetQuotaProblem(quota, { sheets: 1, bytes: quota.bytes }, { newSheet: true, bytes: 1 })).toMatch(/at most 100 MB/);
    expect(sheetQuotaProblem(quota, { sheets: 1, bytes: quota.bytes }, { newSheet: false, bytes: 10, replacedBytes: 10 })).toBeUndefined();
  });

  it('gives bigger tiers more', () => {
    expect(SHEET_QUOTAS.developer.sheets).toBeGreaterThan(SHEET_QUOTAS.free.sheets);
    expect(SHEET_QUOTAS.pro.bytes).toBeGreaterThan(SHEET_QUOTAS.developer.bytes);
  });
});

describe('payment requests', () => {
  it('refuses a top-off below the minimum or above the maximum', () => {
    expect(topoffAmountProblem(0)).toMatch(/between 5 and 1,000 USD/);
    expect(topoffAmountProblem(PAYMENT_LIMITS.topoffMinMicro - 1)).toBeDefined();
    expect(topoffAmountProblem(PAYMENT_LIMITS.topoffMinMicro)).toBeUndefined();
    expect(topoffAmountProblem(PAYMENT_LIMITS.topoffMaxMicro)).toBeUndefined();
    expect(topoffAmountProblem(PAYMENT_LIMITS.topoffMaxMicro + 1)).toBeDefined();
  });

  it('allows a few pending requests per account', () => {
    expect(pendingAllows(PAYMENT_LIMITS.pendingPerAccount - 1)).toBe(true);
    expect(pendingAllows(PAYMENT_LIMITS.pendingPerAccount)).toBe(false);
  });
});
