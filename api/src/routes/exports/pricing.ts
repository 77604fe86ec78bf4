/**
 * The single export price table (DECISIONS §3): one price per file, bulk files $1.00, one source
 * $0.10, Pro 20% less. Micro-USD.
 */
import type { Tier } from '@uda/shared/catalog';

export type ExportPriceKind = 'bulk' | 'source';

export const EXPORT_PRICE_MICRO: Readonly<Record<ExportPriceKind, number>> = { bulk: 1_000_000, source: 100_000 };

/** Pro pays 80% of the list price. */
const TIER_PERCENT: Readonly<Record<Tier, number>> = { free: 100, developer: 100, pro: 80 };

export function exportPriceMicro(kind: ExportPriceKind, tier: Tier): number {
  return (EXPORT_PRICE_MICRO[kind] * TIER_PERCENT[tier]) / 100;
}
