/**
 * The progress line a person sees on a terminal while a table loads, and the line it leaves.
 */
import { describe, expect, it } from '@jest/globals';
import { formatDone, formatProgress } from './progress.ts';

describe('formatProgress', () => {
  it('shows the estimated rows, their rate and the time left', () => {
    expect(formatProgress({ table: 'food_nutrients', fraction: 0.25, elapsedSeconds: 10, estimatedRows: 26_000_000 })).toBe(
      'food_nutrients  25%  ~6,500,000 rows  650,000 rows/s  ETA 0:30',
    );
  });

  it('shows only the share done and the time left when the input gives no estimate', () => {
    expect(formatProgress({ table: 'sec_filings', fraction: 0.5, elapsedSeconds: 90 })).toBe('sec_filings  50%  ETA 1:30');
  });

  it('has no time left to show before anything is done', () => {
    expect(formatProgress({ table: 'gutenberg', fraction: 0, elapsedSeconds: 0, estimatedRows: 75_000 })).toBe('gutenberg  0%  ETA –');
  });
});

describe('formatDone', () => {
  it('gives the exact rows, the time taken and the rate', () => {
    expect(formatDone('food_nutrients', 26_000_000, 21)).toBe('food_nutrients  26,000,000 rows in 0:21  1,238,095 rows/s');
  });
});
