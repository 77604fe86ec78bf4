/**
 * Every price of the service, in one place (SPEC "Credits and metering"; DECISIONS §3), in integer
 * micro-USD. The per-row table lives in `@uda/shared/catalog` because the query-runner ranks sources
 * by it too; this module is where the API reads every price from.
 */
import { PRICE_PER_ROW_MICRO_USD, type PriceClass, type Tier } from '@uda/shared/catalog';

export { PRICE_PER_ROW_MICRO_USD };

/** SPEC "Credits and metering" §2: the monthly grant per tier. */
export const MONTHLY_GRANT_MICRO_USD: Readonly<Record<Tier, number>> = {
  free: 5_000_000,
  developer: 29_000_000,
  pro: 99_000_000,
};

/** Price of `rows` rows of one class for one tier. */
export function priceMicro(priceClass: PriceClass, tier: Tier, rows: number): number {
  if (!Number.isInteger(rows) || rows < 0) throw new RangeError(`rows must be a non-negative integer, got ${rows}`);
  return PRICE_PER_ROW_MICRO_USD[priceClass][tier] * rows;
}

export type ExportPriceKind = 'bulk' | 'source';

/** DECISIONS §3: one price per export file; bulk files $1.00, one source $0.10. */
export const EXPORT_PRICE_MICRO: Readonly<Record<ExportPriceKind, number>> = { bulk: 1_000_000, source: 100_000 };

/** Pro pays 80% of the export list price. */
const EXPORT_TIER_PERCENT: Readonly<Record<Tier, number>> = { free: 100, developer: 100, pro: 80 };

export function exportPriceMicro(kind: ExportPriceKind, tier: Tier): number {
  return (EXPORT_PRICE_MICRO[kind] * EXPORT_TIER_PERCENT[tier]) / 100;
}

/** DECISIONS §3: an export file is charged once per account and file version per 24 h window. */
export const EXPORT_WINDOW_MS = 24 * 60 * 60 * 1000;
