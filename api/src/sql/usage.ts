/**
 * What a SQL result costs and how `X-Service-Usage` reports it (SPEC Resources; DECISIONS §3):
 * rows are charged once, at the rate of the dearest source the query reads, and reported under that
 * source. The runner's `rowsBySource` already names that source (from DuckDB's parser).
 */
import { type PriceClass, findSource, type Tier } from '@uda/shared/catalog';
import type { ResultMeta } from '@uda/shared/runner-contract';
import type { BreakdownItem } from '../billing/index.ts';
import { priceMicro } from '../prices.ts';
import { usdNumber } from '../money.ts';

export interface SqlUsage {
  readonly rowsCharged: number;
  readonly costMicro: number;
  readonly breakdown: readonly BreakdownItem[];
  /** Metrics label: the billed source's price class. */
  readonly priceClass: PriceClass;
}

export const FREE_USAGE: SqlUsage = { rowsCharged: 0, costMicro: 0, breakdown: [], priceClass: 'open' };

export function usageOf(meta: Pick<ResultMeta, 'rowsBySource'>, tier: Tier): SqlUsage {
  const breakdown: BreakdownItem[] = [];
  let priceClass: PriceClass = 'open';
  for (const [sourceId, rows] of Object.entries(meta.rowsBySource)) {
    const source = findSource(sourceId);
    if (!source || rows <= 0) continue;
    priceClass = source.priceClass;
    const costPerRowMicro = priceMicro(source.priceClass, tier, 1);
    breakdown.push({ source: source.id, rows, costPerRowMicro, costMicro: costPerRowMicro * rows });
  }
  return {
    rowsCharged: breakdown.reduce((sum, item) => sum + item.rows, 0),
    costMicro: breakdown.reduce((sum, item) => sum + item.costMicro, 0),
    breakdown,
    priceClass,
  };
}

/** The `X-Service-Usage` JSON text. */
export function usageHeader(usage: SqlUsage): string {
  return JSON.stringify({
    rows_charged: usage.rowsCharged,
    request_cost: usdNumber(usage.costMicro),
    by_source: usage.breakdown.map((item) => ({
      source: item.source,
      rows: item.rows,
      cost_per_row: usdNumber(item.costPerRowMicro),
      cost: usdNumber(item.costMicro),
    })),
  });
}
