import { afterAll, beforeAll, describe, it, expect } from '@jest/globals';
import { createSqlParser } from './parser.ts';
import type { SqlParser } from './parser.ts';
import { validateSql } from './validate.ts';
import { billedSource, rowsBySource } from './billing.ts';

let parser: SqlParser;
beforeAll(async () => {
  parser = await createSqlParser();
});
afterAll(() => parser.close());

describe('validateSql', () => {
  it.each([
    ['select title from gutenberg', ['gutenberg']],
    ['with a as (select * from census_states) select * from a join gutenberg on true', ['census_states', 'gutenberg']],
    ['values (1), (2)', []],
    ['table gutenberg', ['gutenberg']],
    ['from gutenberg select title', ['gutenberg']],
    ["pivot census_states on name in ('Ohio') using sum(pop)", ['census_states']],
    ['show tables', []],
    // Schema-only forms read no rows and are billed nothing (DECISIONS §3); SUMMARIZE reads rows.
    ['describe gutenberg', []],
    ['show gutenberg', []],
    ['select column_name from (describe gutenberg)', []],
    ['select * from (describe gutenberg) d join sec_companies s on true', ['sec_companies']],
    ["select column_name from information_schema.columns where table_name = 'gutenberg'", []],
    ['summarize gutenberg', ['gutenberg']],
    ['select 1;', []],
  ])('accepts %j as one SELECT whose billed rows come from %j', async (sql, tables) => {
    const result = await validateSql(sql, parser);
    expect(result.ok).toBe(true);
    if (result.ok) expect([...result.tables].sort()).toEqual(tables);
  });

  it.each(['explain select 1', 'set threads = 1', 'pragma version', 'call pragma_version()', 'checkpoint', 'begin transaction', 'use memory', 'vacuum'])(
    'refuses %j as not a SELECT',
    async (sql) => {
      expect(await validateSql(sql, parser)).toMatchObject({ ok: false, message: 'Only SELECT statements are allowed.' });
    },
  );

  it('refuses two statements', async () => {
    expect(await validateSql('select 1; select 2', parser)).toMatchObject({ ok: false, reason: 'statement' });
  });

  it('refuses a syntax error with the parser message and no internal prefix', async () => {
    const result = await validateSql('selec 1', parser);
    expect(result).toEqual({ ok: false, reason: 'syntax', message: 'SQL syntax error: syntax error at or near "selec"' });
  });

  it.each([
    ["select * from query('select 1')", 'query'],
    ["select * from query_table('gutenberg')", 'query_table'],
    ['select * from duckdb_settings()', 'duckdb_settings'],
    ["select current_setting('temp_directory')", 'current_setting'],
    ["select * from read_text('/etc/passwd')", 'read_text'],
    ["select * from sniff_csv('/etc/passwd')", 'sniff_csv'],
    ["select * from parquet_metadata('x')", 'parquet_metadata'],
  ])('refuses %j because it calls %s', async (sql, fn) => {
    expect(await validateSql(sql, parser)).toEqual({ ok: false, reason: 'function', message: `Function not allowed: ${fn}` });
  });

  it.each([
    ['select * from enable_peg_parser()', 'Function not allowed: enable_peg_parser'],
    ['select * from disable_peg_parser()', 'Function not allowed: disable_peg_parser'],
    ['select * from checkpoint()', 'Function not allowed: checkpoint'],
    ['select version()', 'Function not allowed: version'],
    ["select current_setting('temp_directory')", 'Function not allowed: current_setting'],
    ['select * from duckdb_databases()', 'Function not allowed: duckdb_databases'],
    ["select getvariable('x')", 'Function not allowed: getvariable'],
    ["select nextval('s')", 'Function not allowed: nextval'],
    ['select * from pg_settings', 'Table not allowed: pg_settings'],
    ['select name, value from pg_catalog.pg_settings', 'Table not allowed: pg_catalog.pg_settings'],
    ['select * from pragma_database_list', 'Table not allowed: pragma_database_list'],
    ['select * from duckdb_tables', 'Table not allowed: duckdb_tables'],
    ['select * from system.main.duckdb_settings', 'Table not allowed: system.main.duckdb_settings'],
    ['summarize pg_settings', 'Table not allowed: pg_settings'],
    ['select * from information_schema.views', 'Table not allowed: information_schema.views'],
    ['select term from _search_gutenberg_postings', 'Table not allowed: _search_gutenberg_postings'],
    ['select * from (select * from range(3) r join pg_tables on true)', 'Table not allowed: pg_tables'],
    ['select len(x) from (select version() as x)', 'Function not allowed: version'],
  ])('refuses %j: not on the allow-list', async (sql, message) => {
    expect(await validateSql(sql, parser)).toEqual({ ok: false, reason: 'function', message });
  });

  it.each([
    "select upper(title), length(title), coalesce(authors, '?'), title ilike '%a%' from gutenberg where text_id between 1 and 9",
    'select language, count(*), avg(text_id), string_agg(title, \', \'), list(title) from gutenberg group by all',
    'select title, row_number() over (partition by language order by issued desc) from gutenberg qualify 1 = 1',
    "select date_trunc('year', issued), strftime(issued, '%Y'), regexp_extract(title, '[0-9]+') from gutenberg",
    'select * from range(3) r, unnest([1, 2]) u, generate_series(1, 2) g',
    'select list_transform([1, 2], x -> x + 1), [1, 2][1], {a: 1}.a, nullif(1, 1), split_part(\'a b\', \' \', 1)',
    'select table_name, column_name, data_type from information_schema.columns',
    'select * from information_schema.tables',
    'with x as (select 1 as a) select * from x',
    'show tables',
    'show databases',
  ])('accepts a reader\'s query %j', async (sql) => {
    expect(await validateSql(sql, parser)).toMatchObject({ ok: true });
  });

  it.each(['\uFFFD', '%FF', 'select \uD800', '\u00e9'])('refuses %j with a clean message, never "native callback"', async (sql) => {
    const result = await validateSql(sql, parser);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).not.toMatch(/native callback|Failed to extract|Parser Error/);
  });

  it('accepts SELECT 1;; as one statement', async () => {
    expect(await validateSql('SELECT 1;;', parser)).toMatchObject({ ok: true });
  });

  it('applies the textual rules before parsing', async () => {
    expect(await validateSql("select 'drop'", parser)).toMatchObject({ message: 'Disallowed operation: DROP' });
  });
});

describe('billing by source', () => {
  it('bills a row that reads several sources under the dearest one', () => {
    expect(billedSource(['gutenberg', 'wiki'])?.id).toBe('wiki');
    expect(rowsBySource(['gutenberg', 'census_states'], 3)).toEqual({ census: 3 });
  });

  it('bills nothing for queries without catalog tables or without rows', () => {
    expect(rowsBySource([], 5)).toEqual({});
    expect(rowsBySource(['my_sheet'], 5)).toEqual({});
    expect(rowsBySource(['gutenberg'], 0)).toEqual({});
  });
});
