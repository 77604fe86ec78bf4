/**
 * The non-secret limits in one place (STYLE §9). SPEC "Limits" and DECISIONS §3–§4.
 */
import type { Tier } from '@uda/shared/catalog';
import { DEFAULT_FAIR_SHARE, type FairShareLimits } from './fair/rules.ts';

export interface Limits {
  /** Burst: per IP, every route, before authentication. */
  readonly burst: { readonly points: number; readonly windowS: number };
  /** Anonymous allowance: per IP, only 2xx answers count. */
  readonly anonymous: { readonly points: number; readonly windowS: number };
  /** Export/SQL cap per account per UTC day. */
  readonly exportDaily: number;
  /** Connected-sheet cap per account per UTC day. */
  readonly sheetDaily: number;
  /** Concurrent SQL per account and the hourly runner-time budget of failed runs (DECISIONS §4 Fair shares). */
  readonly fairShare: FairShareLimits;
}

export const DEFAULT_LIMITS: Limits = {
  burst: { points: 100, windowS: 15 * 60 },
  anonymous: { points: 50, windowS: 24 * 60 * 60 },
  exportDaily: 1_000,
  sheetDaily: 1_000,
  fairShare: DEFAULT_FAIR_SHARE,
};

/** Prices and monthly grants are in `prices.ts`. */

export const TIERS: readonly Tier[] = ['free', 'developer', 'pro'];
