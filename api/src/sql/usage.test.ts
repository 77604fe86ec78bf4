import { describe, expect, it } from '@jest/globals';
import { exportPriceMicro } from '../prices.ts';
import { usageHeader, usageOf } from './usage.ts';

describe('usageOf and usageHeader', () => {
  it('charges the billed source at the caller tier and reports it in by_source', () => {
    const usage = usageOf({ rowsBySource: { wiki: 4 } }, 'developer');
    expect(usage).toEqual({ rowsCharged: 4, costMicro: 60_000, breakdown: [{ source: 'wiki', rows: 4, costPerRowMicro: 15_000, costMicro: 60_000 }], priceClass: 'encyclopedia' });
    expect(JSON.parse(usageHeader(usage))).toEqual({
      rows_charged: 4,
      request_cost: 0.06,
      by_source: [{ source: 'wiki', rows: 4, cost_per_row: 0.015, cost: 0.06 }],
    });
  });

  it('costs nothing when no catalog table is read', () => {
    expect(usageOf({ rowsBySource: {} }, 'pro')).toEqual({ rowsCharged: 0, costMicro: 0, breakdown: [], priceClass: 'open' });
  });
});

describe('exportPriceMicro', () => {
  it('bulk $1.00, one source $0.10, Pro 20% less', () => {
    expect(exportPriceMicro('bulk', 'free')).toBe(1_000_000);
    expect(exportPriceMicro('source', 'developer')).toBe(100_000);
    expect(exportPriceMicro('bulk', 'pro')).toBe(800_000);
    expect(exportPriceMicro('source', 'pro')).toBe(80_000);
  });
});
