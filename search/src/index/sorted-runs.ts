/**
 * A large table written in key order without one sort of all its rows. Its rows are first appended
 * to a scratch table as runs, each run sorted by the key (the index appends one per slice of
 * documents); the output is then written one range of keys at a time, each range sorted alone.
 * As each run is stored in key order, a range reads only the row groups whose key min/max meet it
 * (DuckDB's zonemaps): in effect a merge of the runs that holds one range at a time, where one
 * `ORDER BY` over every row would hold (or spill) them all.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent, quoteLiteral } from '@uda/shared/duckdb';

/** Keys sampled to place the bounds: ranges then come within a few per cent of their target size. */
const SAMPLE_ROWS = 100_000;

/** The keys that cut `table` into ranges of about `rowsPerRange` rows, ascending (none: one range). */
async function rangeBounds(connection: DuckDBConnection, table: string, key: string, rowsPerRange: number): Promise<string[]> {
  const counted = await connection.runAndReadAll(`SELECT count(*)::BIGINT AS n FROM ${quoteIdent(table)}`);
  const ranges = Math.ceil(Number(counted.getRowObjects()[0]!.n) / rowsPerRange);
  if (ranges <= 1) return [];
  const fractions = Array.from({ length: ranges - 1 }, (_, i) => (i + 1) / ranges);
  const reader = await connection.runAndReadAll(
    `SELECT quantile_disc(${quoteIdent(key)}, [${fractions.join(', ')}]) AS bounds
     FROM (SELECT ${quoteIdent(key)} FROM ${quoteIdent(table)}) USING SAMPLE reservoir(${SAMPLE_ROWS} ROWS)`,
  );
  const bounds = reader.getRowObjectsJson()[0]!.bounds as (string | null)[];
  // A frequent key can be several quantiles: each bound once, in order.
  return bounds.filter((bound, i): bound is string => bound !== null && bound !== bounds[i - 1]);
}

/** The `WHERE` conditions of the ranges, in key order, that together hold every key once. */
export function rangeConditions(key: string, bounds: readonly string[]): string[] {
  const column = quoteIdent(key);
  const edges = [undefined, ...bounds, undefined];
  return edges.slice(1).map((upper, i) => {
    const lower = edges[i];
    const conditions = [
      ...(lower === undefined ? [] : [`${column} >= ${quoteLiteral(lower)}`]),
      ...(upper === undefined ? [] : [`${column} < ${quoteLiteral(upper)}`]),
    ];
    return conditions.join(' AND ') || 'true';
  });
}

/**
 * Runs each of `inserts` (given a range's condition on `key`) once per range of `runs`, ranges in
 * key order: each insert's target table gets its rows in key order, as long as each insert sorts
 * its own range.
 */
export async function insertByRanges(
  connection: DuckDBConnection,
  runs: { readonly table: string; readonly key: string; readonly rowsPerRange: number },
  inserts: readonly ((where: string) => string)[],
): Promise<void> {
  const bounds = await rangeBounds(connection, runs.table, runs.key, runs.rowsPerRange);
  for (const where of rangeConditions(runs.key, bounds)) {
    for (const insert of inserts) await connection.run(insert(where));
  }
}
