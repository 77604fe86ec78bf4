/**
 * CSV files that DuckDB reads itself (`read_csv`): explicit column types, strict RFC 4180 parsing
 * (no sniffing, no skipped or padded rows), the header checked name by name, row rules written as
 * SQL, and every failure turned into `file:line: reason` (`csvSource` is what a table spec holds).
 *
 * Each file is read in two layers. The text layer is the file as csv-parse would give it: every
 * VARCHAR (and every integer, which is checked before it is cast) is text, '' when empty. The typed
 * layer applies the rules (`checks`, plus "is an integer" for each integer column), failing on the
 * first broken one, and casts. A failure is located afterwards, by a second pass over the file that
 * finds the first record breaking the rule and counts the physical line it starts on.
 */
import { open, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { brokenCheck, firstBreaking, ident, raiseOnBroken, sqlString, type RowCheck, type SqlSource } from './sql-source.ts';
import { InputError } from './table-spec.ts';

export interface CsvSql {
  /** The path under the input folder that error messages name, e.g. `food/food_nutrient.csv`. */
  readonly file: string;
  /** Every header name in file order, each with the DuckDB type the text must parse as. */
  readonly columns: Readonly<Record<string, string>>;
  /** Defaults to UTF-8; the Census county file is Latin-1. */
  readonly encoding?: 'utf-8' | 'latin-1';
  /** Rules each record must pass, in the order they are reported. */
  readonly checks?: readonly RowCheck[];
  /**
   * Other files this one is joined with or checked against, each read the same way and named by
   * its key as a common table expression (`WITH categories AS (…)`).
   */
  readonly lookups?: Readonly<Record<string, CsvSql>>;
  /** The select list that makes the table's columns, over the file's typed layer `f` and the lookups. */
  readonly select: string;
  /** Joins after `FROM (typed layer) AS f`, e.g. `LEFT JOIN categories c ON c.id = f.food_category_id`. */
  readonly joins?: string;
  /** `ORDER BY` list that restores the dump's order when joins shuffle it (a plain read keeps it). */
  readonly order?: string;
}


const INTEGER_TYPES = new Set(['INTEGER', 'BIGINT', 'SMALLINT']);

/** Text, as csv-parse gives it: VARCHAR and integer columns (integers are checked, then cast). */
const isText = (type: string) => type === 'VARCHAR' || INTEGER_TYPES.has(type);

/** The rules of `csv`: its own, after "is an integer" for each integer column. */
function allChecks(csv: CsvSql): RowCheck[] {
  const integers = Object.entries(csv.columns)
    .filter(([, type]) => INTEGER_TYPES.has(type))
    .map(([name]) => ({
      failsWhen: `${ident(name)} <> '' AND NOT regexp_full_match(${ident(name)}, '-?[0-9]+')`,
      reason: `${sqlString(`${name} is not an integer: `)} || to_json(${ident(name)})`,
    }));
  return [...integers, ...(csv.checks ?? [])];
}

/**
 * `read_csv(…)` of the file under `inputDir`: the text layer, non-text columns typed by DuckDB.
 * No `new_line`: DuckDB then takes LF and CRLF (the Census files), and `'\r\n'` given explicitly
 * reads no rows at all in DuckDB 1.5.
 */
function textLayer(inputDir: string, csv: CsvSql, ignoreErrors = false): string {
  const asRead = Object.entries(csv.columns).map(([name, type]) => `${sqlString(name)}: ${sqlString(isText(type) ? 'VARCHAR' : type)}`);
  const columns = Object.entries(csv.columns).map(([name, type]) => (isText(type) ? `coalesce(${ident(name)}, '') AS ${ident(name)}` : ident(name)));
  return `SELECT ${columns.join(', ')} FROM read_csv(${sqlString(join(inputDir, csv.file))},
    auto_detect = false, header = true, delim = ',', quote = '"', escape = '"',
    strict_mode = true, null_padding = false, ignore_errors = ${ignoreErrors}, encoding = ${sqlString(csv.encoding ?? 'utf-8')},
    columns = {${asRead.join(', ')}})`;
}

/** The typed layer: rules enforced (the first broken one raises), integers cast. */
function typedLayer(inputDir: string, csv: CsvSql): string {
  const columns = Object.entries(csv.columns).map(([name, type]) =>
    INTEGER_TYPES.has(type) ? `nullif(${ident(name)}, '')::${type} AS ${ident(name)}` : ident(name),
  );
  return `SELECT ${columns.join(', ')} FROM (${textLayer(inputDir, csv)})${raiseOnBroken(csv.file, allChecks(csv))}`;
}

/** `WITH` clause naming the lookups of `csv`, or ''. */
function withLookups(inputDir: string, csv: CsvSql): string {
  const lookups = Object.entries(csv.lookups ?? {}).map(([name, lookup]) => `${ident(name)} AS (${readCsvSql(inputDir, lookup)})`);
  return lookups.length ? `WITH ${lookups.join(', ')} ` : '';
}

/** `SELECT …` of the table's rows from the file under `inputDir` (and its lookups). */
export function readCsvSql(inputDir: string, csv: CsvSql): string {
  const order = csv.order ? ` ORDER BY ${csv.order}` : '';
  return `${withLookups(inputDir, csv)}SELECT ${csv.select} FROM (${typedLayer(inputDir, csv)}) AS f ${csv.joins ?? ''}${order}`;
}

/** Every file a read of `csv` opens: the file itself and its lookups'. */
function filesOf(csv: CsvSql): CsvSql[] {
  return [csv, ...Object.values(csv.lookups ?? {}).flatMap(filesOf)];
}

/** The line record `record` (1 = the first after the header) starts on: records before it may span lines. */
async function lineOfRecord(connection: DuckDBConnection, inputDir: string, csv: CsvSql, record: number): Promise<number> {
  const newlines = Object.entries(csv.columns)
    .filter(([, type]) => isText(type))
    .map(([name]) => `length(${ident(name)}) - length(replace(${ident(name)}, chr(10), ''))`);
  const reader = await connection.runAndReadAll(
    `SELECT coalesce(sum(${newlines.join(' + ') || '0'}), 0)::BIGINT AS extra
     FROM (SELECT row_number() OVER () AS n, * FROM (${textLayer(inputDir, csv, true)})) WHERE n < ?`,
    [record],
  );
  return 1 + record + Number(reader.getRowObjects()[0]?.extra ?? 0);
}

/** The `file:line` error for a failed read of `csv` (or of one of its lookups), or undefined if it was not the input's fault. */
async function csvReadError(connection: DuckDBConnection, inputDir: string, csv: CsvSql, error: unknown): Promise<InputError | undefined> {
  const message = error instanceof Error ? error.message : String(error);
  const broken = brokenCheck(error);
  if (broken) {
    const file = filesOf(csv).find((f) => f.file === broken.file)!;
    const check = allChecks(file)[broken.check]!;
    const first = await firstBreaking(connection, textLayer(inputDir, file, true), check, withLookups(inputDir, file)).catch(() => undefined);
    if (!first) return new InputError(file.file, undefined, broken.reason);
    return new InputError(file.file, await lineOfRecord(connection, inputDir, file, first.record), first.reason);
  }
  const record = /CSV Error on Line: (\d+)/.exec(message)?.[1];
  if (!record) return undefined;
  // DuckDB counts records (the header is 1), not lines; its message names the file's full path.
  const file = filesOf(csv).find((f) => message.includes(`file = ${join(inputDir, f.file)}`)) ?? csv;
  const line = await lineOfRecord(connection, inputDir, file, Number(record) - 1).catch(() => undefined);
  return new InputError(file.file, line, csvReason(message));
}

/** DuckDB's reason: conversions become "<column> is not a <type>", structural errors "malformed CSV: <reason>". */
function csvReason(message: string): string {
  const conversion = /Error when converting column "([^"]+)"\. Could not convert string "([^"]*)" to '([^']+)'/.exec(message);
  if (conversion) return `${conversion[1]} is not a ${conversion[3]}: ${JSON.stringify(conversion[2])}`;
  if (/unicode|UTF-?8/i.test(message)) return 'text is not valid utf8';
  const reason = message.split('\n').map((l) => l.trim()).find((l, i, all) => i > 0 && l !== '' && !all[i - 1]!.startsWith('CSV Error') && !l.startsWith('Original Line'));
  return `malformed CSV: ${reason ?? 'unreadable row'}`;
}

/** DuckDB ignores the header's names when given the columns, so they are compared here, for the file and its lookups. */
async function checkCsvHeader(inputDir: string, csv: CsvSql): Promise<void> {
  for (const file of filesOf(csv)) await checkHeader(inputDir, file);
}

async function checkHeader(inputDir: string, csv: CsvSql): Promise<void> {
  const handle = await open(join(inputDir, csv.file)).catch(() => {
    throw new InputError(csv.file, undefined, 'file not found');
  });
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(64 * 1024), 0, 64 * 1024, 0);
    const first = buffer.subarray(0, bytesRead).toString('latin1').replace(/^\u00EF\u00BB\u00BF/, '').split('\n')[0]!.replace(/\r$/, '');
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

/** `csv` under `inputDir` as a source the builder loads with one INSERT … SELECT. */
export function csvSource(inputDir: string, csv: CsvSql): SqlSource {
  return {
    async select() {
      await checkCsvHeader(inputDir, csv);
      return readCsvSql(inputDir, csv);
    },
    inputError: (connection, error) => csvReadError(connection, inputDir, csv, error),
    estimatedRows: () => estimateRows(inputDir, csv),
  };
}

/** About how many records the file holds: its size over the bytes per line of its first megabyte. */
async function estimateRows(inputDir: string, csv: CsvSql): Promise<number | undefined> {
  const path = join(inputDir, csv.file);
  const handle = await open(path).catch(() => undefined);
  if (!handle) return undefined;
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(1 << 20), 0, 1 << 20, 0);
    let lines = 0;
    for (let i = buffer.indexOf(10); i >= 0 && i < bytesRead; i = buffer.indexOf(10, i + 1)) lines++;
    if (lines < 2) return undefined;
    return Math.max(0, Math.round((await stat(path)).size / (bytesRead / lines)) - 1);
  } finally {
    await handle.close();
  }
}
