import { describe, expect, it } from '@jest/globals';
import { reserve } from './etiquette-memory.ts';

const rule = { intervalMs: 3_000, marginMs: 0, maxWaitMs: 6_000 };

describe('slot reservation', () => {
  it('spaces consecutive callers one interval apart', () => {
    const state = { nextSlot: 0, backoffUntil: 0 };
    expect(reserve(state, 1_000, rule)).toEqual({ waitMs: 0 });
    expect(reserve(state, 1_000, rule)).toEqual({ waitMs: 3_000 });
    expect(reserve(state, 2_000, rule)).toEqual({ waitMs: 5_000 });
  });

  it('refuses a caller whose slot is beyond the maximum wait, without a backoff to report', () => {
    const state = { nextSlot: 0, backoffUntil: 0 };
    for (let i = 0; i < 3; i++) reserve(state, 0, rule);
    expect(reserve(state, 0, rule)).toEqual({ refused: true, backoffMs: 0 });
  });

  it('holds every caller until an upstream backoff has passed', () => {
    expect(reserve({ nextSlot: 0, backoffUntil: 4_000 }, 1_000, rule)).toEqual({ waitMs: 3_000 });
    expect(reserve({ nextSlot: 0, backoffUntil: 60_000 }, 1_000, rule)).toEqual({ refused: true, backoffMs: 59_000 });
  });
});
