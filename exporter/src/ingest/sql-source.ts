/**
 * An input DuckDB reads itself (`read_csv`, `read_json`): the builder inserts its SELECT straight
 * into the table, so its rows never become JavaScript objects; `sqlRows` runs the same SELECT in
 * memory for the ingest tests. A failed read becomes the input's own `file:line` error.
 */
import { DuckDBInstance, DuckDBTypeId, type DuckDBConnection } from '@duckdb/node-api';
import type { InputError, Row, TableSpec } from './table-spec.ts';

export interface SqlSource {
  /** Checks what the SQL cannot (a CSV's header names), then gives the SELECT of the table's rows. */
  select(): Promise<string>;
  /** The failure located in the input (`file:line: reason`), or undefined when the input is not at fault. */
  inputError(connection: DuckDBConnection, error: unknown): Promise<InputError | undefined>;
  /** About how many rows the input holds, for the progress line. */
  estimatedRows(): Promise<number | undefined>;
}

/** A table read by DuckDB: `rows()` is the same SELECT, for tests and small callers. */
export function sqlTable(spec: Omit<TableSpec, 'rows' | 'sql'>, source: SqlSource): TableSpec {
  return { ...spec, sql: source, rows: () => sqlRows(source) };
}

/** Runs `run` (a read of `source`), turning a failure into the input's error, or `otherwise`'s. */
export async function runSql<T>(
  connection: DuckDBConnection,
  source: SqlSource,
  run: () => Promise<T>,
  otherwise: (error: unknown) => unknown = (error) => error,
): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw (await source.inputError(connection, error).catch(() => undefined)) ?? otherwise(error);
  }
}

/** The rows of `source`, read by an in-memory DuckDB, as plain JSON values. */
export async function* sqlRows(source: SqlSource): AsyncGenerator<Row> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const select = await source.select();
    const reader = await runSql(connection, source, () => connection.runAndReadAll(select));
    // Dates as ISO text and BIGINT ids as numbers (they fit).
    const bigints = new Set(reader.columnNames().filter((_, i) => reader.columnType(i).typeId === DuckDBTypeId.BIGINT));
    for (const row of reader.getRowObjectsJson()) {
      yield Object.fromEntries(Object.entries(row).map(([k, v]) => [k, bigints.has(k) && v !== null ? Number(v) : v]));
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}
