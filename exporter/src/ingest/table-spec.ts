/**
 * What every ingest module hands to the builder: a typed table and a stream of its rows.
 * Row values are plain JSON values; DuckDB casts them to the declared column types on load.
 */
import type { DuckDBConnection } from '@duckdb/node-api';

export type Row = Record<string, unknown>;

export interface TableSpec {
  /** SQL table name, as listed in the source catalog. */
  readonly name: string;
  /** Column name → DuckDB type, in table order. */
  readonly columns: Readonly<Record<string, string>>;
  readonly primaryKey?: readonly string[];
  /** A row repeating an earlier row's key is dropped (the first, in the input's order, wins) instead of failing the build. */
  readonly keepFirst?: boolean;
  /** Secondary indexes for the lookups' point queries. */
  readonly indexes?: readonly (readonly string[])[];
  /** Set for an input DuckDB reads itself (`read_csv`, `read_json`): the builder loads its SELECT, not `rows`. */
  readonly sql?: SqlSource;
  rows(): AsyncIterable<Row>;
}

/** A malformed input, reported with the file and line it came from. */
export class InputError extends Error {
  override readonly name = 'InputError';
  readonly file: string;
  readonly line: number | undefined;

  constructor(file: string, line: number | undefined, message: string) {
    super(`${file}${line === undefined ? '' : `:${line}`}: ${message}`);
    this.file = file;
    this.line = line;
  }
}

/** An input DuckDB reads itself; `sql-source.ts` builds these. */
export interface SqlSource {
  /** Checks what the SQL cannot (a CSV's header names), then gives the SELECT of the table's rows. */
  select(): Promise<string>;
  /** The failure located in the input (`file:line: reason`), or undefined when the input is not at fault. */
  inputError(connection: DuckDBConnection, error: unknown): Promise<InputError | undefined>;
  /** About how many rows the input holds, for the progress line. */
  estimatedRows(): Promise<number | undefined>;
}
