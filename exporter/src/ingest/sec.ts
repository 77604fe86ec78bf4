/**
 * SEC EDGAR: `company_tickers.json`, `submissions/CIK##########.json` (data.sec.gov), and EDGAR
 * `*.idx` master indexes. Daily and quarterly indexes differ: the daily heading says `File Name` and
 * dates are `YYYYMMDD`; the quarterly heading says `Filename` and dates are `YYYY-MM-DD`.
 * `sec_filings` is read by DuckDB: the index files by `read_csv` (`|`-separated, after a preamble
 * read here), the submissions by `read_json`, checks in SQL, failures located to `file:line`.
 */
import { createReadStream } from 'node:fs';
import { open, readdir, readFile, stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { brokenCheck, firstBreaking, ident, raiseOnBroken, sqlString, sqlTable, type RowCheck, type SqlSource } from './sql-source.ts';
import { InputError, type TableSpec } from './table-spec.ts';

const TICKERS = 'sec/company_tickers.json';
const SUBMISSIONS_DIR = 'sec/submissions';

/** The fields of an index row, as text; `cik|company|form|date|file name`. */
const INDEX_COLUMNS = ['cik', 'company_name', 'form_type', 'date', 'file_name'] as const;
const ACCESSION = String.raw`([0-9]{10}-[0-9]{2}-[0-9]{6})\.txt$`;
/** `20200103` or `2020-01-03` → `2020-01-03` (NULL when it is neither, or no real date). */
const ISO_DATE = `try_cast(regexp_replace("date", '^([0-9]{4})-?([0-9]{2})-?([0-9]{2})$', '\\1-\\2-\\3') AS DATE)`;

/** What every index row must satisfy, in the order it is reported. */
const INDEX_CHECKS: readonly RowCheck[] = [
  { failsWhen: `NOT regexp_full_match(cik, '[0-9]+') OR NOT regexp_full_match("date", '[0-9]{4}-?[0-9]{2}-?[0-9]{2}') OR ${ISO_DATE} IS NULL`, reason: "'bad CIK or date'" },
  { failsWhen: `NOT regexp_matches(file_name, '${ACCESSION}')`, reason: "'no accession number in ' || file_name" },
];

/** One `*.idx` file: its name in errors, its path, and how many lines precede its rows (preamble, heading, rule). */
interface IndexFile {
  readonly file: string;
  readonly path: string;
  readonly skip: number;
}

const HEADING = /^CIK\|Company Name\|Form Type\|Date Filed\|File ?[Nn]ame$/;

/**
 * Finds where the rows of an EDGAR master index start: after the preamble, the heading line and the
 * dashed rule. The preamble differs between daily and quarterly indexes, so it is read, not assumed.
 */
async function indexFile(inputDir: string, name: string): Promise<IndexFile> {
  const file = `sec/${name}`;
  const path = join(inputDir, file);
  const handle = await open(path);
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(16 * 1024), 0, 16 * 1024, 0);
    const lines = buffer.subarray(0, bytesRead).toString('latin1').split('\n').map((l) => l.replace(/\r$/, ''));
    const heading = lines.findIndex((line) => HEADING.test(line));
    // The last line of the buffer may be cut short, so the rule must lie before it.
    if (heading < 0 || heading + 1 >= lines.length - 1) throw new InputError(file, undefined, 'no `CIK|Company Name|…` heading found');
    if (!/^-+$/.test(lines[heading + 1]!)) throw new InputError(file, heading + 2, 'expected the dashed rule under the heading');
    return { file, path, skip: heading + 2 };
  } finally {
    await handle.close();
  }
}

/** The rows of `files` (all with the same preamble length) as text, with the file each came from. */
function indexText(files: readonly IndexFile[], ignoreErrors = false): string {
  const columns = INDEX_COLUMNS.map((name) => `${sqlString(name)}: 'VARCHAR'`);
  // No quoting: a `"` in a company name is a character. Blank lines are skipped, as EDGAR's trailing one.
  return `SELECT * FROM read_csv([${files.map((f) => sqlString(f.path)).join(', ')}],
    auto_detect = false, header = false, skip = ${files[0]!.skip}, delim = '|', quote = '', escape = '',
    strict_mode = true, null_padding = false, ignore_errors = ${ignoreErrors}, encoding = 'latin-1', filename = true,
    columns = {${columns.join(', ')}})`;
}

/** Every index row as a filing, the checks enforced; files grouped by preamble length (one read each). */
function indexRows(files: readonly IndexFile[]): string {
  const groups = Map.groupBy(files, (f) => f.skip);
  const reads = [...groups.values()].map((group) => `SELECT * FROM (${indexText(group)})${raiseOnBroken('sec/*.idx', INDEX_CHECKS)}`);
  return `SELECT cik::BIGINT AS cik, regexp_extract(file_name, '${ACCESSION}', 1) AS accession_number, company_name, form_type,
      ${ISO_DATE} AS date_filed, file_name, NULL::DATE AS report_date, NULL::VARCHAR AS primary_document, 'index' AS origin, filename
    FROM (${reads.join(' UNION ALL ')})`;
}

/** The submissions fields kept per filing, each a list parallel to `accessionNumber`. */
const RECENT = { form_type: 'form', date_filed: 'filingDate', report_date: 'reportDate', primary_document: 'primaryDocument' } as const;

/** What every submissions file must satisfy: `filings.recent` is a set of parallel arrays. */
const SUBMISSION_CHECKS: readonly RowCheck[] = [
  { failsWhen: `json_type(recent, '$.accessionNumber') IS DISTINCT FROM 'ARRAY'`, reason: "'filings.recent.accessionNumber is missing'" },
  ...Object.values(RECENT).map((field) => ({
    failsWhen: `json_type(recent, '$.${field}') IS DISTINCT FROM 'ARRAY' OR json_array_length(recent, '$.${field}') <> json_array_length(recent, '$.accessionNumber')`,
    reason: sqlString(`filings.recent.${field} is not aligned with accessionNumber`),
  })),
];

/** One record per submissions file (`cik`, `name`, `recent`), in file order. */
function submissionsText(paths: readonly string[]): string {
  return `SELECT cik ->> '$' AS cik, name ->> '$' AS name, filings -> '$.recent' AS recent, filename
    FROM read_json([${paths.map(sqlString).join(', ')}], format = 'unstructured', filename = true,
      columns = {cik: 'JSON', name: 'JSON', filings: 'JSON'}, maximum_object_size = 16777216)`;
}

/** Every filing of the submissions files, one row per entry of the parallel arrays. */
function submissionRows(paths: readonly string[]): string {
  const lists = Object.entries(RECENT).map(([column, field]) => `json_extract_string(recent, '$.${field}[*]') AS ${ident(column)}`);
  return `SELECT cik::BIGINT AS cik, unnest(accession_number) AS accession_number, name AS company_name,
      unnest(form_type) AS form_type, unnest(date_filed)::DATE AS date_filed, NULL::VARCHAR AS file_name,
      nullif(unnest(report_date), '')::DATE AS report_date, nullif(unnest(primary_document), '') AS primary_document,
      'submissions' AS origin
    FROM (SELECT cik, name, json_extract_string(recent, '$.accessionNumber[*]') AS accession_number, ${lists.join(', ')}
          FROM (${submissionsText(paths)})${raiseOnBroken(SUBMISSIONS_DIR, SUBMISSION_CHECKS)})`;
}

/** The input's submissions and index files, each in name order. */
async function secFiles(inputDir: string): Promise<{ submissions: string[]; indexes: string[] }> {
  const dir = join(inputDir, SUBMISSIONS_DIR);
  const submissions = (await readdir(dir).catch(() => [] as string[])).filter((n) => /^CIK\d{10}\.json$/.test(n)).sort();
  const indexes = (await readdir(join(inputDir, 'sec'))).filter((n) => n.endsWith('.idx')).sort();
  return { submissions: submissions.map((n) => join(dir, n)), indexes };
}

/**
 * Submissions first, then the index files in name order: the builder keeps the first row of each
 * key (`keepFirst`), so submissions, richer than index rows, win when both list a filing, and a
 * filing listed twice in the indexes is kept once.
 */
function filingsSql(submissions: readonly string[], indexes: readonly IndexFile[]): string {
  const columns = 'cik, accession_number, company_name, form_type, date_filed, file_name, report_date, primary_document, origin';
  const rows = [
    ...(submissions.length ? [submissionRows(submissions)] : []),
    ...(indexes.length ? [`SELECT ${columns} FROM (${indexRows(indexes)})`] : []),
  ];
  if (!rows.length) throw new InputError('sec', undefined, 'no submissions or index files found');
  return rows.join(' UNION ALL ');
}

/** The line of `path` that holds its `record`th row (1-based) after `skip` lines, blank lines not counted as rows. */
async function lineOfRow(path: string, skip: number, record: number): Promise<number> {
  const lines = createInterface({ input: createReadStream(path, { encoding: 'latin1' }), crlfDelay: Infinity });
  let line = 0;
  let rows = 0;
  for await (const text of lines) {
    line++;
    if (line > skip && text.trim() !== '' && ++rows === record) break;
  }
  lines.close();
  return line;
}

/** The first index row, in file and line order, breaking `check`. */
async function firstBrokenIndexRow(connection: DuckDBConnection, indexes: readonly IndexFile[], check: RowCheck): Promise<InputError | undefined> {
  for (const index of indexes) {
    const first = await firstBreaking(connection, indexText([index], true), check);
    if (first) return new InputError(index.file, await lineOfRow(index.path, index.skip, first.record), first.reason);
  }
  return undefined;
}

/** The first submissions file, by name, breaking `check`. */
async function firstBrokenSubmission(connection: DuckDBConnection, paths: readonly string[], check: RowCheck): Promise<InputError | undefined> {
  const first = await firstBreaking(connection, submissionsText(paths), check);
  if (!first) return undefined;
  return new InputError(`${SUBMISSIONS_DIR}/${paths[first.record - 1]!.split('/').pop()}`, undefined, first.reason);
}

/** The `file:line` error for a failed read of the EDGAR files, or undefined if it was not the input's fault. */
async function secReadError(connection: DuckDBConnection, inputDir: string, error: unknown): Promise<InputError | undefined> {
  const { submissions, indexes: names } = await secFiles(inputDir);
  const indexes = await Promise.all(names.map((name) => indexFile(inputDir, name)));
  const broken = brokenCheck(error);
  if (broken?.file === SUBMISSIONS_DIR) return firstBrokenSubmission(connection, submissions, SUBMISSION_CHECKS[broken.check]!);
  if (broken) return firstBrokenIndexRow(connection, indexes, INDEX_CHECKS[broken.check]!);
  const message = error instanceof Error ? error.message : String(error);
  // DuckDB's CSV errors name the file and its physical line (preamble and blank lines counted).
  const csv = /CSV Error on Line: (\d+)[\s\S]*?file = (\S+)/.exec(message);
  const index = csv && indexes.find((f) => f.path === csv[2]);
  if (csv && index) {
    const fields = /Expected Number of Columns: \d+ Found: (\d+)/.exec(message)?.[1];
    const reason = fields ? `expected 5 fields, found ${fields}` : /unicode|UTF-?8/i.test(message) ? 'text is not valid latin-1' : 'malformed index row';
    return new InputError(index.file, Number(csv[1]), reason);
  }
  const json = /Malformed JSON in file "([^"]*)", (.*)/.exec(message);
  if (json) return new InputError(`${SUBMISSIONS_DIR}/${json[1]!.split('/').pop()}`, undefined, `invalid JSON: ${json[2]!.split('\n')[0]!.trim()}`);
  return undefined;
}

/** About how many index rows there are: the files' bytes over the bytes per line of the first. */
async function estimateFilings(inputDir: string): Promise<number | undefined> {
  const { indexes } = await secFiles(inputDir);
  if (!indexes.length) return undefined;
  const sizes = await Promise.all(indexes.map(async (name) => (await stat(join(inputDir, 'sec', name))).size));
  const sample = await readFile(join(inputDir, 'sec', indexes[0]!), 'latin1');
  const perLine = sample.length / Math.max(1, sample.split('\n').length - 1);
  return Math.round(sizes.reduce((sum, size) => sum + size, 0) / perLine);
}

/** The EDGAR filings, read by DuckDB: submissions files by `read_json`, index files by `read_csv`. */
function filingsSource(inputDir: string): SqlSource {
  return {
    async select() {
      const { submissions, indexes } = await secFiles(inputDir);
      return filingsSql(submissions, await Promise.all(indexes.map((name) => indexFile(inputDir, name))));
    },
    inputError: (connection, error) => secReadError(connection, inputDir, error),
    estimatedRows: () => estimateFilings(inputDir),
  };
}

async function readJson(path: string, file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new InputError(file, undefined, `invalid JSON: ${(error as Error).message}`);
  }
}

export function secTables(inputDir: string): TableSpec[] {
  return [
    {
      name: 'sec_companies',
      columns: { cik: 'BIGINT', ticker: 'VARCHAR', title: 'VARCHAR' },
      primaryKey: ['ticker'],
      indexes: [['cik']],
      async *rows() {
        const doc = (await readJson(join(inputDir, TICKERS), TICKERS)) as Record<string, { cik_str: number; ticker: string; title: string }>;
        for (const [index, entry] of Object.entries(doc)) {
          if (typeof entry?.cik_str !== 'number' || typeof entry.ticker !== 'string') {
            throw new InputError(TICKERS, undefined, `entry "${index}" lacks cik_str or ticker`);
          }
          yield { cik: entry.cik_str, ticker: entry.ticker, title: entry.title };
        }
      },
    },
    sqlTable({
      name: 'sec_filings',
      columns: {
        cik: 'BIGINT',
        accession_number: 'VARCHAR',
        company_name: 'VARCHAR',
        form_type: 'VARCHAR',
        date_filed: 'DATE',
        file_name: 'VARCHAR',
        report_date: 'DATE',
        primary_document: 'VARCHAR',
        origin: 'VARCHAR',
      },
      // One filing appears once per filer: a Form 4 is listed under the issuer and the owner.
      primaryKey: ['cik', 'accession_number'],
      keepFirst: true,
      indexes: [['form_type']],
    }, filingsSource(inputDir)),
  ];
}
