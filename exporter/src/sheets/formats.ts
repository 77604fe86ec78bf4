/**
 * The upload formats, how DuckDB reads each, and which column types a sheet may hold.
 */
import { quoteLiteral } from '@uda/shared/duckdb';

export const SHEET_FORMATS = ['csv', 'tsv', 'json', 'ndjson', 'parquet'] as const;
export type SheetFormat = (typeof SHEET_FORMATS)[number];

export const FORMAT_LABELS: Record<SheetFormat, string> = {
  csv: 'CSV',
  tsv: 'TSV',
  json: 'JSON',
  ndjson: 'NDJSON',
  parquet: 'Parquet',
};

export function isTextFormat(format: SheetFormat): boolean {
  return format !== 'parquet';
}

export function delimiterOf(format: SheetFormat): string {
  return format === 'tsv' ? '\t' : ',';
}

/**
 * The table function reading the upload. CSV and TSV keep DuckDB's type detection over the whole
 * file (`sample_size = -1`, so a late odd value cannot fail the load) but fix the dialect to RFC
 * 4180 with a header row: letting the sniffer guess the quote character turns a broken quote into
 * silently wrong columns instead of an error. JSON must be records (objects), one per row.
 */
export function readerSql(format: SheetFormat, path: string): string {
  const file = quoteLiteral(path);
  switch (format) {
    case 'csv':
    case 'tsv':
      return `read_csv(${file}, header = true, skip = 0, delim = ${quoteLiteral(delimiterOf(format))}, quote = '"', escape = '"', strict_mode = true, sample_size = -1)`;
    case 'json':
      return `read_json(${file}, format = 'array', records = 'true', sample_size = -1)`;
    case 'ndjson':
      return `read_json(${file}, format = 'newline_delimited', records = 'true', sample_size = -1)`;
    case 'parquet':
      return `read_parquet(${file})`;
  }
}

/**
 * Flat scalar types only: what search, the SQL routes and every client can show. Nested values
 * (LIST, STRUCT, MAP, UNION), INTERVAL, BLOB, BIT and mixed JSON are refused, naming the column.
 */
const SUPPORTED_TYPE =
  /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|FLOAT|DOUBLE|DECIMAL\(\d+,\s*\d+\)|BOOLEAN|VARCHAR|DATE|TIME|TIME WITH TIME ZONE|TIMESTAMP|TIMESTAMP_S|TIMESTAMP_MS|TIMESTAMP_NS|TIMESTAMP WITH TIME ZONE|UUID)$/;

export function isSupportedType(type: string): boolean {
  return SUPPORTED_TYPE.test(type);
}

/** A short, engine-neutral name for a refused type. */
export function describeType(type: string): string {
  if (type.endsWith(']')) return 'list';
  const word = /^[A-Z_]+/.exec(type)?.[0] ?? type;
  return word.toLowerCase();
}
