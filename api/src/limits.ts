/**
 * The non-secret limits in one place (STYLE §9). SPEC "Limits" and DECISIONS §3–§4.
 */
import type { Tier } from '@uda/shared/catalog';

export interface Limits {
  /** Burst: per IP, every route, before authentication. */
  readonly burst: { readonly points: number; readonly windowS: number };
  /** Anonymous allowance: per IP, only 2xx answers count. */
  readonly anonymous: { readonly points: number; readonly windowS: number };
  /** Export/SQL cap per account per UTC day. */
  readonly exportDaily: number;
  /** Connected-sheet cap per account per UTC day. */
  readonly sheetDaily: number;
}

export const DEFAULT_LIMITS: Limits = {
  burst: { points: 100, windowS: 15 * 60 },
  anonymous: { points: 50, windowS: 24 * 60 * 60 },
  exportDaily: 1_000,
  sheetDaily: 1_000,
};

/** Prices and monthly grants are in `billing/prices.ts`. */

export const TIERS: readonly Tier[] = ['free', 'developer', 'pro'];
