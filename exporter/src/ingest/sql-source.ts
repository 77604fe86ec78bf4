/**
 * An input DuckDB reads itself (`read_csv`, `read_json`): the builder inserts its SELECT straight
 * into the table, so its rows never become JavaScript objects; `sqlRows` runs the same SELECT in
 * memory for the ingest tests. A failed read becomes the input's own `file:line` error.
 */
import { DuckDBInstance, DuckDBTypeId, type DuckDBConnection } from '@duckdb/node-api';
import type { Row, SqlSource, TableSpec } from './table-spec.ts';

export type { SqlSource } from './table-spec.ts';

/** A rule over a record, written in SQL. */
export interface RowCheck {
  /** SQL that is true when the record is bad, e.g. `NOT regexp_full_match("Issued", '…')`. */
  readonly failsWhen: string;
  /** SQL text for the reason, e.g. `'Issued is not a date: ' || "Issued"`. */
  readonly reason: string;
}

export const sqlString = (text: string) => `'${text.replace(/'/g, "''")}'`;
export const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Prefix of the error a broken rule raises: `uda-check <file> <rule number>: <reason>`. */
const CHECK_FAILED = 'uda-check';

/** ` WHERE …` that raises on the first record of `file` breaking one of `checks` (in their order), or ''. */
export function raiseOnBroken(file: string, checks: readonly RowCheck[]): string {
  const raise = checks.map((check, i) => `WHEN ${check.failsWhen} THEN error(${sqlString(`${CHECK_FAILED} ${file} ${i}: `)} || (${check.reason}))`);
  return raise.length ? ` WHERE CASE ${raise.join(' ')} ELSE true END` : '';
}

/** The file and rule number a `raiseOnBroken` error names, with its reason. */
export function brokenCheck(error: unknown): { file: string; check: number; reason: string } | undefined {
  const message = error instanceof Error ? error.message : String(error);
  const broken = new RegExp(`${CHECK_FAILED} (\\S+) (\\d+): (.*)`).exec(message);
  return broken ? { file: broken[1]!, check: Number(broken[2]), reason: broken[3]! } : undefined;
}

/**
 * The first record (1-based, in input order) of `records` that breaks `check`, with its reason:
 * the record that raised may not be the first, as DuckDB reads a large input in parallel.
 * `prefix` is a `WITH …` the rule may need.
 */
export async function firstBreaking(
  connection: DuckDBConnection,
  records: string,
  check: RowCheck,
  prefix = '',
): Promise<{ record: number; reason: string } | undefined> {
  const reader = await connection.runAndReadAll(
    `${prefix}SELECT n, (${check.reason}) AS reason FROM (SELECT row_number() OVER () AS n, * FROM (${records})) WHERE ${check.failsWhen} ORDER BY n LIMIT 1`,
  );
  const found = reader.getRowObjects()[0];
  return found ? { record: Number(found.n), reason: String(found.reason) } : undefined;
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
