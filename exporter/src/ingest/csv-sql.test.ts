/**
 * CSV files read by DuckDB's `read_csv`: the same checks as the JavaScript reader, reported the same
 * way (`file:line: reason`), through the real build path (`loadTable`) into a real DuckDB.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadTableAlone } from '../../test/load-table.ts';
import { foodTables } from './food.ts';

const DATA = join(import.meta.dirname, '..', '..', 'data');
let scratch: string;
let header: string;
let goodRows: string[];

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'uda-csv-sql-'));
  const lines = (await readFile(join(DATA, 'food/food_nutrient.csv'), 'utf8')).split('\n');
  header = lines[0]!;
  goodRows = lines.slice(1, 4);
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** Builds `food_nutrients` from a food_nutrient.csv made of `lines` (as bytes when given a Buffer). */
async function load(name: string, content: string | Buffer): Promise<number> {
  const dir = join(scratch, name);
  await mkdir(join(dir, 'food'), { recursive: true });
  await writeFile(join(dir, 'food/food_nutrient.csv'), content);
  return loadTableAlone(foodTables(dir)[1]!, dir);
}

const file = (...rows: string[]) => `${[header, ...rows].join('\n')}\n`;

describe('food_nutrient.csv through read_csv', () => {
  it('loads the sample with every row', async () => {
    const lines = (await readFile(join(DATA, 'food/food_nutrient.csv'), 'utf8')).trimEnd().split('\n');
    expect(await load('sample', `${lines.join('\n')}\n`)).toBe(lines.length - 1);
  });

  it('a number that does not parse names the file, line, column and text', async () => {
    await expect(load('number', file(goodRows[0]!, '"90000009","9001001","1005","abc","","","","","","",""'))).rejects.toThrow(
      'food/food_nutrient.csv:3: amount is not a DOUBLE: "abc"',
    );
  });

  it('a fraction in an integer column is an error, not a rounded id', async () => {
    await expect(load('fraction', file('"90000009","9001001.5","1005","1","","","","","","",""'))).rejects.toThrow('food/food_nutrient.csv:2: fdc_id is not an integer: "9001001.5"');
  });

  it('an unterminated quote and a short row are malformed CSV at their line', async () => {
    await expect(load('quote', file(goodRows[0]!, goodRows[1]!, '"90000009","9001001","1005","1,"","","","","","",""'))).rejects.toThrow(
      /^food\/food_nutrient\.csv:4: malformed CSV: .*unterminated quote/,
    );
    await expect(load('short', file('"90000009","9001001","1005"'))).rejects.toThrow(/^food\/food_nutrient\.csv:2: malformed CSV: Expected Number of Columns: 11 Found: 3/);
  });

  it('a Latin-1 byte in the UTF-8 file is an error, not a replacement character', async () => {
    const bytes = Buffer.concat([Buffer.from(file(goodRows[0]!)), Buffer.from('"90000009","9001001","1005","1","","","","","","caf', 'utf8'), Buffer.from([0xe9]), Buffer.from('",""\n')]);
    await expect(load('latin1', bytes)).rejects.toThrow(/^food\/food_nutrient\.csv:3: text is not valid utf8/);
  });

  it('a renamed or missing column fails on line 1', async () => {
    await expect(load('header', `${header.replace('"amount"', '"amt"')}\n${goodRows[0]}\n`)).rejects.toThrow('food/food_nutrient.csv:1: missing column amount');
  });

  it('a duplicate id fails the build, naming the table', async () => {
    await expect(load('duplicate', file(goodRows[0]!, goodRows[0]!))).rejects.toThrow(/^table food_nutrients: .*(Duplicate|PRIMARY KEY|primary key)/i);
  });
});
