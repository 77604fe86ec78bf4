import { describe, expect, it } from '@jest/globals';
import { RESTART, crashesAfterExit, restartDelayMs } from './supervise.ts';

describe('restart back-off', () => {
  it('waits longer after each crash in a row, up to a cap', () => {
    expect(restartDelayMs(1)).toBe(RESTART.firstMs);
    expect(restartDelayMs(2)).toBe(2 * RESTART.firstMs);
    expect(restartDelayMs(3)).toBe(4 * RESTART.firstMs);
    expect(restartDelayMs(1_000)).toBe(RESTART.maxMs);
  });

  it('starts over after a child that ran long enough to count as healthy', () => {
    expect(crashesAfterExit(4, RESTART.healthyMs)).toBe(1);
    expect(crashesAfterExit(4, RESTART.healthyMs - 1)).toBe(5);
    expect(crashesAfterExit(0, 0)).toBe(1);
  });
});
