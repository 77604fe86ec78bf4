/**
 * Every CSV file DuckDB reads, through the real build path (`loadTable` into a real DuckDB): a bad
 * line in any of them fails the build with `file:line: reason`, the line being the physical line
 * the record starts on, also after records that span lines.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadTableAlone } from '../../test/load-table.ts';
import { censusTables } from './census.ts';
import { foodTables } from './food.ts';
import { gutenbergTables } from './gutenberg.ts';
import type { TableSpec } from './table-spec.ts';

const DATA = join(import.meta.dirname, '..', '..', 'data');
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'uda-csv-sources-'));
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/**
 * A copy of the samples named `name` in which `file`'s line `line` (1-based) is replaced by `text`
 * (`encoding` is how the file is read and written back).
 */
async function withLine(name: string, file: string, line: number, text: string, encoding: BufferEncoding = 'utf8'): Promise<string> {
  const dir = join(scratch, name);
  await cp(DATA, dir, { recursive: true });
  const lines = (await readFile(join(dir, file), encoding)).split('\n');
  lines[line - 1] = text;
  await writeFile(join(dir, file), Buffer.from(lines.join('\n'), encoding));
  return dir;
}

function build(table: TableSpec): Promise<number> {
  return loadTableAlone(table, scratch);
}

describe('FoodData Central files read by DuckDB', () => {
  it('food.csv: a category id missing from food_category.csv fails at its line', async () => {
    const dir = await withLine('unknown-category', 'food/food.csv', 5, '"9001004","sr_legacy_food","Cheese, blue","99","2011-09-01"');
    await expect(build(foodTables(dir)[0]!)).rejects.toThrow('food/food.csv:5: unknown food_category_id 99');
  });

  it('food.csv: a date that does not parse fails at its line', async () => {
    const dir = await withLine('bad-date', 'food/food.csv', 3, '"9001002","sr_legacy_food","Butter, whipped","1","someday"');
    await expect(build(foodTables(dir)[0]!)).rejects.toThrow('food/food.csv:3: publication_date is not a DATE: "someday"');
  });

  it('food_category.csv: a lookup file with a bad id fails at its own line', async () => {
    const dir = await withLine('bad-category', 'food/food_category.csv', 3, '"two","0200","Spices and Herbs"');
    await expect(build(foodTables(dir)[0]!)).rejects.toThrow('food/food_category.csv:3: id is not an integer: "two"');
  });

  it('sr_legacy_food.csv: an NDB number that is not an integer fails at its line', async () => {
    const dir = await withLine('bad-ndb', 'food/sr_legacy_food.csv', 4, '"9001003","1003x"');
    await expect(build(foodTables(dir)[0]!)).rejects.toThrow('food/sr_legacy_food.csv:4: NDB_number is not an integer: "1003x"');
  });

  it('nutrient.csv: a row with a missing field fails at its line', async () => {
    const dir = await withLine('short-nutrient', 'food/nutrient.csv', 6, '"1005","Carbohydrate, by difference","G"');
    await expect(build(foodTables(dir)[2]!)).rejects.toThrow(/^food\/nutrient\.csv:6: malformed CSV: Expected Number of Columns: 5 Found: 3/);
  });

  it('food.csv: a repeated fdc_id fails the build, naming the table and the key', async () => {
    const dir = await withLine('duplicate-food', 'food/food.csv', 3, '"9001001","sr_legacy_food","Butter, again","1","2011-09-01"');
    await expect(build(foodTables(dir)[0]!)).rejects.toThrow('table food: duplicate primary key fdc_id = 9001001');
  });
});

describe('pg_catalog.csv read by DuckDB', () => {
  it('counts the lines of titles that span two, so a later bad row is named by its own line', async () => {
    // Records 2 and 4 (the Bill of Rights, the Gettysburg Address) span two lines each: the 5th starts on line 8.
    const catalog = (await readFile(join(DATA, 'gutenberg/pg_catalog.csv'), 'utf8')).split('\n');
    expect(catalog[7]).toMatch(/^5,/);
    const dir = await withLine('short-book', 'gutenberg/pg_catalog.csv', 8, '5,Text,1975-12-01');
    await expect(build(gutenbergTables(dir)[0]!)).rejects.toThrow(/^gutenberg\/pg_catalog\.csv:8: malformed CSV: Expected Number of Columns: 9 Found: 3/);
  });

  it('a Text# that is not an integer fails at its line', async () => {
    const dir = await withLine('bad-text-id', 'gutenberg/pg_catalog.csv', 8, '5x,Text,1975-12-01,Title,en,,,,');
    await expect(build(gutenbergTables(dir)[0]!)).rejects.toThrow('gutenberg/pg_catalog.csv:8: Text# is not an integer: "5x"');
  });

  it('an impossible date fails at its line, though it has the right shape', async () => {
    const dir = await withLine('impossible-date', 'gutenberg/pg_catalog.csv', 8, '5,Text,1975-13-45,Title,en,,,,');
    await expect(build(gutenbergTables(dir)[0]!)).rejects.toThrow('gutenberg/pg_catalog.csv:8: Issued is not a date: 1975-13-45');
  });
});

describe('Census estimates read by DuckDB', () => {
  it('the Latin-1, CRLF county file: a count that is not an integer fails at its line', async () => {
    const file = 'census/co-est2019-alldata.csv';
    const lines = (await readFile(join(DATA, file), 'latin1')).split('\n');
    const bad = lines[9]!.split(',').map((field, i) => (i === 9 ? '12.5' : field)).join(',');
    const dir = await withLine('bad-count', file, 10, bad, 'latin1');
    const [, counties] = await censusTables(dir);
    await expect(build(counties!)).rejects.toThrow('census/co-est2019-alldata.csv:10: POPESTIMATE2010 is not an integer: "12.5"');
  });

  it('loads every row of both files', async () => {
    const [states, counties] = await censusTables(DATA);
    expect(await build(states!)).toBe(66);
    expect(await build(counties!)).toBe(3193);
  });
});
