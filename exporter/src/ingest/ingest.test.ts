/**
 * Parsers against the real sample dumps in exporter/data, and against small broken copies of them.
 */
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { allTables } from '@uda/shared/catalog';
import { DuckDBInstance } from '@duckdb/node-api';
import { loadTable } from '../build/database.ts';
import { loadTableAlone } from '../../test/load-table.ts';
import { allTableSpecs } from '../sources.ts';
import { censusTables, columnType } from './census.ts';
import { foodTables } from './food.ts';
import { gutenbergTables, parseAuthors } from './gutenberg.ts';
import { liveTables } from './live.ts';
import { secTables } from './sec.ts';
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
  const HEADING = 'CIK|Company Name|Form Type|Date Filed|File Name\n--------------------------------------------------------------------------------\n';

  /** An input folder `name` whose `sec/` holds `files` (name → Latin-1 text) and no submissions. */
  async function secInput(name: string, files: Record<string, string>): Promise<TableSpec> {
    const dir = join(scratch, name);
    await mkdir(join(dir, 'sec'), { recursive: true });
    for (const [file, text] of Object.entries(files)) await writeFile(join(dir, 'sec', file), Buffer.from(text, 'latin1'));
    return secTables(dir)[1]!;
  }

  it('reads the daily index: `File Name` heading and YYYYMMDD dates', async () => {
    const filings = await secInput('daily', { 'master.20200103.idx': await readFile(join(DATA, 'sec/master.20200103.idx'), 'latin1') });
    const rows = await collect(filings);
    expect(rows).toHaveLength(3000);
    expect(rows[0]).toMatchObject({
      cik: 1000229,
      company_name: 'CORE LABORATORIES N V',
      form_type: '4',
      date_filed: '2020-01-03',
      accession_number: '0001209191-20-000788',
      origin: 'index',
    });
  });

  it('reads the quarterly index: `Filename` heading, Cloud HTTP line and ISO dates', async () => {
    const filings = await secInput('quarterly', {
      'master.idx': [
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
    });
    expect(await collect(filings)).toEqual([expect.objectContaining({ cik: 1000045, form_type: '10-Q', date_filed: '2020-02-14' })]);
  });

  it('keeps one row per filing: the submissions over the indexes, an earlier index row over a later one', async () => {
    const dir = join(scratch, 'repeated');
    await mkdir(join(dir, 'sec/submissions'), { recursive: true });
    const submitted = await readFile(join(DATA, 'sec/submissions/CIK0001318605.json'), 'utf8');
    await writeFile(join(dir, 'sec/submissions/CIK0001318605.json'), submitted);
    const accession = (JSON.parse(submitted) as { filings: { recent: { accessionNumber: string[] } } }).filings.recent.accessionNumber[0]!;
    const row = (cik: number, name: string, acc: string) => `${cik}|${name}|4|20200103|edgar/data/${cik}/${acc}.txt\n`;
    await writeFile(join(dir, 'sec/master.20200103.idx'), HEADING + row(1318605, 'FROM THE INDEX', accession) + row(7, 'FIRST', '0000000007-20-000001'));
    await writeFile(join(dir, 'sec/master.20200104.idx'), HEADING + row(7, 'LATER', '0000000007-20-000001') + row(7, 'OTHER', '0000000007-20-000002'));
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      const total = await loadTable(connection, secTables(dir)[1]!, scratch);
      const reader = await connection.runAndReadAll(
        "SELECT company_name, origin FROM sec_filings WHERE cik = 7 OR (cik = 1318605 AND accession_number = ?) ORDER BY rowid", [accession]);
      expect(reader.getRowObjectsJson()).toEqual([
        { company_name: 'Tesla, Inc.', origin: 'submissions' },
        { company_name: 'FIRST', origin: 'index' },
        { company_name: 'OTHER', origin: 'index' },
      ]);
      expect(total).toBe(100 + 2);
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });

  it('names the line of a row with a missing field', async () => {
    const filings = await secInput('broken', { 'broken.idx': 'CIK|Company Name|Form Type|Date Filed|File Name\n-----\n1|A|4|20200103|edgar/data/1/0000000001-20-000001.txt\n2|B|4\n' });
    await expect(loadTableAlone(filings, scratch)).rejects.toThrow(new InputError('sec/broken.idx', 4, 'expected 5 fields, found 3'));
  });

  it('names the submissions file whose filings lists are not parallel, or that is not JSON', async () => {
    const dir = join(scratch, 'submissions');
    await mkdir(join(dir, 'sec/submissions'), { recursive: true });
    const doc = JSON.parse(await readFile(join(DATA, 'sec/submissions/CIK0001318605.json'), 'utf8')) as { filings: { recent: { form: string[] } } };
    await writeFile(join(dir, 'sec/submissions/CIK0000000001.json'), await readFile(join(DATA, 'sec/submissions/CIK0001318605.json')));
    doc.filings.recent.form.pop();
    await writeFile(join(dir, 'sec/submissions/CIK0000000002.json'), JSON.stringify(doc));
    await expect(loadTableAlone(secTables(dir)[1]!, scratch)).rejects.toThrow(
      new InputError('sec/submissions/CIK0000000002.json', undefined, 'filings.recent.form is not aligned with accessionNumber'),
    );
    await writeFile(join(dir, 'sec/submissions/CIK0000000002.json'), '{"cik": "2", "name": ');
    await expect(loadTableAlone(secTables(dir)[1]!, scratch)).rejects.toThrow(/^sec\/submissions\/CIK0000000002\.json: invalid JSON/);
  });

  it('names the line of a bad date, of a file name without an accession number, and of a missing rule', async () => {
    const good = (n: number) => `${n}|A|4|20200103|edgar/data/1/0000000001-20-00000${n}.txt\n`;
    const badDate = await secInput('bad-date', { 'a.idx': HEADING + good(1), 'b.idx': `Preamble\n \n${HEADING}${good(2)}\n${good(3)}3|C|4|2020-13-45|edgar/data/3/0000000003-20-000003.txt\n` });
    await expect(loadTableAlone(badDate, scratch)).rejects.toThrow(new InputError('sec/b.idx', 8, 'bad CIK or date'));
    const noAccession = await secInput('no-accession', { 'a.idx': HEADING + good(1) + '2|B|4|20200103|edgar/data/2/readme.txt\n' });
    await expect(loadTableAlone(noAccession, scratch)).rejects.toThrow(new InputError('sec/a.idx', 4, 'no accession number in edgar/data/2/readme.txt'));
    const noRule = await secInput('no-rule', { 'a.idx': 'CIK|Company Name|Form Type|Date Filed|File Name\n' + good(1) });
    await expect(loadTableAlone(noRule, scratch)).rejects.toThrow(new InputError('sec/a.idx', 2, 'expected the dashed rule under the heading'));
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
