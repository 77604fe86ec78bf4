/**
 * CSV files that DuckDB reads itself (`read_csv`), for the large sources: explicit column types,
 * strict RFC 4180 parsing (no sniffing, no skipped or padded rows), the header checked name by name,
 * and DuckDB's errors turned into the same `file:line: reason` as the JavaScript reader gives.
 * The rows never pass through JavaScript objects on the build path; `csvRows` runs the same SQL in
 * memory for the ingest tests and any caller that wants rows.
 */
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { InputError, type Row } from './table-spec.ts';

export interface CsvSql {
  /** The path under the input folder that error messages name, e.g. `food/food_nutrient.csv`. */
  readonly file: string;
  /** Every header name in file order, each with the DuckDB type the text must parse as. */
  readonly columns: Readonly<Record<string, string>>;
  /** The select list that makes the table's columns from the file's, in table order. */
  readonly select: string;
}

const sqlString = (text: string) => `'${text.replace(/'/g, "''")}'`;

const INTEGER_TYPES = new Set(['INTEGER', 'BIGINT', 'SMALLINT']);
const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
/** Prefix of the error a malformed integer raises, which `csvInputError` recognises. */
const NOT_AN_INTEGER = 'uda: not an integer: ';

/** `read_csv(…)` of the file under `inputDir`, every column typed as given (`types`). */
function readCsvCall(inputDir: string, csv: CsvSql, types: Readonly<Record<string, string>>): string {
  const columns = Object.entries(types).map(([name, type]) => `${sqlString(name)}: ${sqlString(type)}`).join(', ');
  return `read_csv(${sqlString(join(inputDir, csv.file))},
    auto_detect = false, header = true, delim = ',', quote = '"', escape = '"', new_line = '\\n',
    strict_mode = true, null_padding = false, ignore_errors = false, encoding = 'utf-8',
    columns = {${columns}})`;
}

/**
 * `SELECT … FROM read_csv(…)` over the file under `inputDir`. DuckDB's integer parsing rounds
 * "1.5" and accepts " 12" and "1e3"; an id must be digits, so integer columns are read as text and
 * cast only after a strict match, failing with the column and the text otherwise.
 */
export function readCsvSql(inputDir: string, csv: CsvSql): string {
  const asRead = Object.fromEntries(Object.entries(csv.columns).map(([name, type]) => [name, INTEGER_TYPES.has(type) ? 'VARCHAR' : type]));
  const checked = Object.entries(csv.columns).map(([name, type]) => {
    if (!INTEGER_TYPES.has(type)) return ident(name);
    const column = ident(name);
    return `CASE WHEN ${column} IS NULL OR ${column} = '' THEN NULL
      WHEN regexp_full_match(${column}, '-?[0-9]+') THEN ${column}::${type}
      ELSE error(${sqlString(`${NOT_AN_INTEGER}${name} `)} || to_json(${column})) END AS ${column}`;
  });
  return `SELECT ${csv.select} FROM (SELECT ${checked.join(', ')} FROM ${readCsvCall(inputDir, csv, asRead)})`;
}

/** The file line of the first record whose `column` holds `text` (records are one line each in these files). */
export async function lineOf(connection: DuckDBConnection, inputDir: string, csv: CsvSql, column: string, text: string): Promise<number | undefined> {
  const asText = Object.fromEntries(Object.keys(csv.columns).map((name) => [name, 'VARCHAR']));
  const reader = await connection.runAndReadAll(
    `SELECT n FROM (SELECT row_number() OVER () AS n, ${ident(column)} AS v FROM ${readCsvCall(inputDir, csv, asText)}) WHERE v = ? ORDER BY n LIMIT 1`,
    [text],
  );
  const n = reader.getRowObjects()[0]?.n;
  return n === undefined ? undefined : Number(n) + 1;
}

/** The `file:line` error for a failed read, locating a malformed integer's line with a second pass. */
export async function csvReadError(connection: DuckDBConnection, inputDir: string, csv: CsvSql, error: unknown): Promise<InputError | undefined> {
  const message = error instanceof Error ? error.message : String(error);
  const integer = new RegExp(`${NOT_AN_INTEGER}(\\S+) (".*")`).exec(message);
  if (integer) {
    const text = JSON.parse(integer[2]!) as string;
    const line = await lineOf(connection, inputDir, csv, integer[1]!, text).catch(() => undefined);
    return new InputError(csv.file, line, `${integer[1]} is not an integer: ${JSON.stringify(text)}`);
  }
  return csvInputError(csv.file, error);
}

/** DuckDB ignores the header's names when given the columns, so they are compared here. */
export async function checkCsvHeader(inputDir: string, csv: CsvSql): Promise<void> {
  const handle = await open(join(inputDir, csv.file)).catch(() => {
    throw new InputError(csv.file, undefined, 'file not found');
  });
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(64 * 1024), 0, 64 * 1024, 0);
    const first = buffer.subarray(0, bytesRead).toString('utf8').replace(/^\uFEFF/, '').split('\n')[0]!.replace(/\r$/, '');
    const names = first.split(',').map((name) => name.replace(/^"(.*)"$/, '$1').replace(/""/g, '"'));
    for (const expected of Object.keys(csv.columns)) {
      if (!names.includes(expected)) throw new InputError(csv.file, 1, `missing column ${expected}`);
    }
    if (names.join(',') !== Object.keys(csv.columns).join(',')) {
      throw new InputError(csv.file, 1, `expected the columns ${Object.keys(csv.columns).join(',')}, found ${names.join(',')}`);
    }
  } finally {
    await handle.close();
  }
}

/**
 * DuckDB's CSV errors say `CSV Error on Line: N`, then the original line, then the reason.
 * Conversions become "<column> is not a <type>"; structural errors are "malformed CSV: <reason>".
 */
export function csvInputError(file: string, error: unknown): InputError | undefined {
  const message = error instanceof Error ? error.message : String(error);
  const line = /CSV Error on Line: (\d+)/.exec(message)?.[1];
  if (!line) return undefined;
  const conversion = /Error when converting column "([^"]+)"\. Could not convert string "([^"]*)" to '([^']+)'/.exec(message);
  if (conversion) return new InputError(file, Number(line), `${conversion[1]} is not a ${conversion[3]}: ${JSON.stringify(conversion[2])}`);
  if (/unicode|UTF-?8/i.test(message)) return new InputError(file, Number(line), 'text is not valid utf8');
  const reason = message.split('\n').map((l) => l.trim()).find((l, i, all) => i > 0 && l !== '' && !all[i - 1]!.startsWith('CSV Error') && !l.startsWith('Original Line'));
  return new InputError(file, Number(line), `malformed CSV: ${reason ?? 'unreadable row'}`);
}

/** The rows of `readCsvSql`, read by an in-memory DuckDB, as plain values (for tests and small files). */
export async function* csvRows(inputDir: string, csv: CsvSql): AsyncGenerator<Row> {
  await checkCsvHeader(inputDir, csv);
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const reader = await connection.runAndReadAll(readCsvSql(inputDir, csv)).catch(async (error: unknown) => {
      throw (await csvReadError(connection, inputDir, csv, error)) ?? error;
    });
    // BIGINT ids as numbers (they fit), so rows compare like the JavaScript reader's.
    for (const row of reader.getRowObjectsJS()) {
      yield Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v]));
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}
