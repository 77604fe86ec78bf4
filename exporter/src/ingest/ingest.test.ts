/**
 * Parsers against the real sample dumps in exporter/data, and against small broken copies of them.
 */
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { allTables } from '@uda/shared/catalog';
import { allTableSpecs } from '../sources.ts';
import { censusTables, columnType } from './census.ts';
import { foodTables } from './food.ts';
import { gutenbergTables, parseAuthors } from './gutenberg.ts';
import { liveTables } from './live.ts';
import { readMasterIndex } from './sec.ts';
import { InputError, type Row, type TableSpec } from './table-spec.ts';

const DATA = join(import.meta.dirname, '..', '..', 'data');

async function collect(table: TableSpec | undefined): Promise<Row[]> {
  const rows: Row[] = [];
  for await (const row of table!.rows()) rows.push(row);
  return rows;
}

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'uda-ingest-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('the exporter builds exactly the catalog tables', () => {
  it('lists every catalog table once', async () => {
    const names = (await allTableSpecs(DATA)).map((t) => t.name);
    expect(names.sort()).toEqual(allTables().sort());
  });
});

describe('gutenberg pg_catalog.csv', () => {
  it('keeps a title that spans two lines as one row', async () => {
    const rows = await collect(gutenbergTables(DATA)[0]);
    const bill = rows.find((r) => r.text_id === 2)!;
    expect(bill.title).toBe('The United States Bill of Rights\nThe Ten Original Amendments to the Constitution of the United States');
    expect(rows).toHaveLength(1823);
  });

  it('splits role-tagged authors into name, dates and role', async () => {
    expect(await parseAuthors('Aesop, 621? BCE-565? BCE; Townsend, George Fyler, 1814-1900 [Translator]')).toEqual([
      { name: 'Aesop', dates: '621? BCE-565? BCE', role: 'Author' },
      { name: 'Townsend, George Fyler', dates: '1814-1900', role: 'Translator' },
    ]);
    expect(await parseAuthors('United States')).toEqual([{ name: 'United States', dates: null, role: 'Author' }]);
    expect(await parseAuthors('')).toEqual([]);
    expect(await parseAuthors('Smith, John [Author of introduction, etc.]')).toEqual([
      { name: 'Smith, John', dates: null, role: 'Author of introduction, etc.' },
    ]);
  });

  it('reports the starting line of a row with a bad date', async () => {
    const dir = join(scratch, 'gutenberg-bad');
    await mkdir(join(dir, 'gutenberg'), { recursive: true });
    await writeFile(
      join(dir, 'gutenberg/pg_catalog.csv'),
      'Text#,Type,Issued,Title,Language,Authors,Subjects,LoCC,Bookshelves\n1,Text,1971-12-01,"Two\nlines",en,,,,\n2,Text,someday,Bad,en,,,,\n',
    );
    await expect(collect(gutenbergTables(dir)[0])).rejects.toThrow('gutenberg/pg_catalog.csv:4: Issued is not a date');
  });
});

describe('census estimates', () => {
  it('decodes the Latin-1 county file', async () => {
    const [, counties] = await censusTables(DATA);
    const rows = await collect(counties);
    expect(rows).toHaveLength(3193);
    const donaAna = rows.find((r) => r.state === '35' && r.county === '013')!;
    expect(donaAna.ctyname).toBe('Doña Ana County');
    expect(typeof donaAna.popestimate2019).toBe('number');
  });

  it('keeps codes as text with their leading zeros and rates as decimals', async () => {
    const [states] = await censusTables(DATA);
    const rows = await collect(states);
    expect(rows[0]).toMatchObject({ sumlev: '010', state: '00', name: 'United States' });
    expect(columnType('RBIRTH2021')).toBe('DOUBLE');
    expect(columnType('POPESTIMATE2023')).toBe('BIGINT');
    expect(columnType('COUNTY')).toBe('VARCHAR');
  });

  it('refuses a Latin-1 byte in the file declared UTF-8, naming the line', async () => {
    const dir = join(scratch, 'census-bad');
    await mkdir(join(dir, 'census'), { recursive: true });
    const lines = (await readFile(join(DATA, 'census/NST-EST2023-ALLDATA.csv'), 'latin1')).split('\r\n');
    lines[2] = lines[2]!.replace('Northeast Region', 'Nordeste Regi\u00f3n');
    await writeFile(join(dir, 'census/NST-EST2023-ALLDATA.csv'), Buffer.from(lines.join('\r\n'), 'latin1'));
    await writeFile(join(dir, 'census/co-est2019-alldata.csv'), await readFile(join(DATA, 'census/co-est2019-alldata.csv')));
    const [states] = await censusTables(dir);
    await expect(collect(states)).rejects.toThrow('census/NST-EST2023-ALLDATA.csv:3: text is not valid utf8');
  });
});

describe('EDGAR master index', () => {
  it('reads the daily index: `File Name` heading and YYYYMMDD dates', async () => {
    const rows = [];
    for await (const f of readMasterIndex(join(DATA, 'sec/master.20200103.idx'), 'master.20200103.idx')) rows.push(f);
    expect(rows).toHaveLength(3000);
    expect(rows[0]).toMatchObject({
      cik: 1000229,
      company_name: 'CORE LABORATORIES N V',
      form_type: '4',
      date_filed: '2020-01-03',
      accession_number: '0001209191-20-000788',
    });
  });

  it('reads the quarterly index: `Filename` heading, Cloud HTTP line and ISO dates', async () => {
    const path = join(scratch, 'master.idx');
    await writeFile(
      path,
      [
        'Description:           Master Index of EDGAR Dissemination Feed',
        'Last Data Received:    March 31, 2020',
        'Comments:              webmaster@sec.gov',
        'Anonymous FTP:         ftp://ftp.sec.gov/edgar/',
        'Cloud HTTP:            https://www.sec.gov/Archives/',
        ' ',
        ' ',
        'CIK|Company Name|Form Type|Date Filed|Filename',
        '--------------------------------------------------------------------------------',
        '1000045|NICHOLAS FINANCIAL INC|10-Q|2020-02-14|edgar/data/1000045/0001564590-20-005281.txt',
        '',
      ].join('\n'),
    );
    const rows = [];
    for await (const f of readMasterIndex(path, 'master.idx')) rows.push(f);
    expect(rows).toEqual([expect.objectContaining({ cik: 1000045, form_type: '10-Q', date_filed: '2020-02-14' })]);
  });

  it('names the line of a row with a missing field', async () => {
    const path = join(scratch, 'broken.idx');
    await writeFile(path, 'CIK|Company Name|Form Type|Date Filed|File Name\n-----\n1|A|4|20200103|edgar/data/1/0000000001-20-000001.txt\n2|B|4\n');
    const read = async () => {
      for await (const _ of readMasterIndex(path, 'broken.idx')) void _;
    };
    await expect(read()).rejects.toThrow(new InputError('broken.idx', 4, 'expected 5 fields, found 3'));
  });
});

describe('FoodData Central CSV', () => {
  it('reads fully quoted fields, commas inside quotes, and joins the category', async () => {
    const rows = await collect(foodTables(DATA)[0]);
    expect(rows).toHaveLength(3004);
    expect(rows[0]).toEqual({
      fdc_id: 9001001,
      data_type: 'sr_legacy_food',
      description: 'Butter, salted',
      food_category_id: 1,
      category: 'Dairy and Egg Products',
      ndb_number: 1001,
      publication_date: '2011-09-01',
    });
  });

  it('turns empty quoted fields into nulls and amounts into numbers', async () => {
    const nutrients = foodTables(DATA)[1]!;
    const iterator = nutrients.rows()[Symbol.asyncIterator]();
    const first = (await iterator.next()).value as Row;
    await iterator.return?.();
    expect(first).toMatchObject({ id: 90000001, fdc_id: 9001001, nutrient_id: 1003, amount: 0.85, data_points: null, footnote: null });
  });

  it('reports an unterminated quote with the file and line', async () => {
    const dir = join(scratch, 'food-bad');
    await mkdir(join(dir, 'food'), { recursive: true });
    const good = await readFile(join(DATA, 'food/nutrient.csv'), 'utf8');
    const lines = good.split('\n');
    lines[3] = '"1004","Total lipid (fat),"G","204","800"';
    await writeFile(join(dir, 'food/nutrient.csv'), lines.join('\n'));
    await expect(collect(foodTables(dir)[2])).rejects.toThrow(/^food\/nutrient\.csv:\d+: malformed CSV/);
  });
});

describe('live snapshots', () => {
  it('builds each live table from the recorded upstream answers', async () => {
    const [wiki, arxiv, stackexchange, pypi, openalex] = liveTables(DATA);
    const wikiRows = await collect(wiki);
    expect(wikiRows.find((r) => r.title === 'Ayrton Senna')).toMatchObject({ url: 'https://en.wikipedia.org/wiki/Ayrton_Senna' });
    expect(wikiRows.find((r) => r.title === 'Counter-Strike')!.extract).not.toContain('<span');
    expect((await collect(arxiv))[0]).toMatchObject({ arxiv_id: '1501.05039', version: 'v1', title: 'Defining Data Science' });
    expect(await collect(stackexchange)).toHaveLength(10);
    expect(await collect(pypi)).toEqual([expect.objectContaining({ name: 'six', version: '1.16.0', license: 'MIT' })]);
    expect(await collect(openalex)).toEqual([
      expect.objectContaining({ id: 'https://openalex.org/W2741809807', publication_year: 2018, abstract: expect.stringMatching(/^Despite growing interest in Open Access/) }),
    ]);
  });
});
