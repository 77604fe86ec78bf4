/**
 * Which source a SQL result is billed under (DECISIONS §3): a row drawing on several sources is
 * charged once, at the highest rate among the sources the query reads, and reported under that
 * source. Tables that are not in the catalog (connected sheets, CTE-free table functions) cost nothing.
 */
import { PRICE_PER_ROW_MICRO_USD, sourceOfTable } from '../catalog.ts';
import type { Source } from '../catalog.ts';

/** The sources a list of table names reads, deduplicated, in catalog-id order. */
export function sourcesOfTables(tables: readonly string[]): Source[] {
  const found = new Map<string, Source>();
  for (const table of tables) {
    const source = sourceOfTable(table);
    if (source) found.set(source.id, source);
  }
  return [...found.values()].sort((a, b) => a.id.localeCompare(b.id));
}

/** The dearest source (by the free-tier rate, which orders the classes the same on every tier). */
export function billedSource(tables: readonly string[]): Source | undefined {
  const rate = (s: Source) => PRICE_PER_ROW_MICRO_USD[s.priceClass].free;
  return sourcesOfTables(tables).reduce<Source | undefined>(
    (best, s) => (best === undefined || rate(s) > rate(best) ? s : best),
    undefined,
  );
}

/** `{source: rows}` for the billed source; empty when no catalog table is read or no row returned. */
export function rowsBySource(tables: readonly string[], rowCount: number): Record<string, number> {
  const source = billedSource(tables);
  return source && rowCount > 0 ? { [source.id]: rowCount } : {};
}
