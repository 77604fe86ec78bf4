import { describe, it, expect } from '@jest/globals';
import { checkSqlText, disallowedOperation, MAX_SQL_LENGTH } from './text-rules.ts';

describe('checkSqlText', () => {
  it.each([
    ['DROP TABLE gutenberg', 'DROP'],
    ["select * from gutenberg where title = 'drop'", 'DROP'],
    ['select 1 -- create a table', 'CREATE'],
    ['select 1 /* Insert */', 'INSERT'],
    ['EXPORT   DATABASE \'x\'', 'EXPORT DATABASE'],
    ['import\n\tdatabase \'x\'', 'IMPORT DATABASE'],
    ["select * from read_csv_auto('x.csv')", 'read_csv'],
    ["select * from READ_JSON_OBJECTS('x')", 'read_json'],
    ["select * from read_ndjson('x')", 'read_ndjson'],
    ["select * from read_parquet('x')", 'read_parquet'],
    ["select * from postgres_scan_pushdown('x')", 'postgres_scan'],
    ["select * from glob('/etc/*')", 'GLOB'],
    ['attach \'x.db\'', 'ATTACH'],
    ['DETACH x', 'DETACH'],
    ['install httpfs', 'INSTALL'],
    ['load httpfs', 'LOAD'],
    ['copy gutenberg to \'x\'', 'COPY'],
    ['ALTER TABLE x', 'ALTER'],
    ['update x set a = 1', 'UPDATE'],
    ['delete from x', 'DELETE'],
    ['merge into x', 'MERGE'],
    ['truncate x', 'TRUNCATE'],
    ['ＤＲＯＰ TABLE x', 'DROP'],
  ])('refuses %j as Disallowed operation: %s', (sql, op) => {
    expect(checkSqlText(sql)).toEqual({ ok: false, message: `Disallowed operation: ${op}` });
  });

  it.each([
    'select created_at, updated_by, dropped from x',
    'select * from gutenberg where title ilike \'%loaded%\'',
    'select export_date from x',
    'select 1 as "database"',
    'select my_read_csv from x',
  ])('accepts words that only contain a keyword: %j', (sql) => {
    expect(checkSqlText(sql)).toEqual({ ok: true });
  });

  it('refuses missing and blank SQL', () => {
    expect(checkSqlText(undefined).ok).toBe(false);
    expect(checkSqlText('   ').ok).toBe(false);
  });

  it('accepts exactly the length limit and refuses one character more', () => {
    const base = 'select 1';
    expect(checkSqlText(base + ' '.repeat(MAX_SQL_LENGTH - base.length)).ok).toBe(true);
    const long = checkSqlText(base + ' '.repeat(MAX_SQL_LENGTH - base.length + 1));
    expect(long).toEqual({ ok: false, message: 'SQL is too long: 10001 characters, the limit is 10,000.' });
  });

  it('names the first rule in the spec order for a text with several words', () => {
    expect(disallowedOperation('drop table x; create table y')).toBe('CREATE');
  });
});
