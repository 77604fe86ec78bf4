/**
 * SEC EDGAR: `company_tickers.json`, `submissions/CIK##########.json` (data.sec.gov), and EDGAR
 * `*.idx` master indexes. Daily and quarterly indexes differ: the daily heading says `File Name` and
 * dates are `YYYYMMDD`; the quarterly heading says `Filename` and dates are `YYYY-MM-DD`.
 */
import { createReadStream } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { InputError, type Row, type TableSpec } from './table-spec.ts';

const TICKERS = 'sec/company_tickers.json';
const SUBMISSIONS_DIR = 'sec/submissions';

export interface Filing {
  readonly accession_number: string;
  readonly cik: number;
  readonly company_name: string;
  readonly form_type: string;
  readonly date_filed: string;
  readonly file_name: string | null;
  readonly report_date: string | null;
  readonly primary_document: string | null;
  readonly origin: 'index' | 'submissions';
}

/** `20200103` or `2020-01-03` → `2020-01-03`. */
export function isoDate(text: string): string | undefined {
  const m = /^(\d{4})-?(\d{2})-?(\d{2})$/.exec(text);
  return m ? `${m[1]}-${m[2]}-${m[3]}` : undefined;
}

/** Parses one EDGAR master index: preamble, heading line, dashed rule, then `|`-separated rows. */
export async function* readMasterIndex(path: string, file: string): AsyncGenerator<Filing> {
  const lines = createInterface({ input: createReadStream(path, { encoding: 'latin1' }), crlfDelay: Infinity });
  let lineNo = 0;
  let state: 'preamble' | 'rule' | 'rows' = 'preamble';
  for await (const line of lines) {
    lineNo++;
    if (state === 'preamble') {
      if (/^CIK\|Company Name\|Form Type\|Date Filed\|File ?[Nn]ame$/.test(line)) state = 'rule';
      continue;
    }
    if (state === 'rule') {
      if (!/^-+$/.test(line)) throw new InputError(file, lineNo, 'expected the dashed rule under the heading');
      state = 'rows';
      continue;
    }
    if (line.trim() === '') continue;
    const parts = line.split('|');
    if (parts.length !== 5) throw new InputError(file, lineNo, `expected 5 fields, found ${parts.length}`);
    const [cik, company, form, date, fileName] = parts as [string, string, string, string, string];
    const dateFiled = isoDate(date);
    if (!/^\d+$/.test(cik) || !dateFiled) throw new InputError(file, lineNo, 'bad CIK or date');
    const accession = /(\d{10}-\d{2}-\d{6})\.txt$/.exec(fileName)?.[1];
    if (!accession) throw new InputError(file, lineNo, `no accession number in ${fileName}`);
    yield {
      accession_number: accession,
      cik: Number(cik),
      company_name: company,
      form_type: form,
      date_filed: dateFiled,
      file_name: fileName,
      report_date: null,
      primary_document: null,
      origin: 'index',
    };
  }
  if (state !== 'rows') throw new InputError(file, undefined, 'no `CIK|Company Name|…` heading found');
}

interface Submissions {
  cik: string;
  name: string;
  filings: { recent: Record<string, unknown[]> };
}

/** `filings.recent` is a set of parallel arrays, one entry per filing. */
export function filingsFromSubmissions(doc: Submissions, file: string): Filing[] {
  const recent = doc.filings?.recent;
  const accessions = recent?.accessionNumber;
  if (!Array.isArray(accessions)) throw new InputError(file, undefined, 'filings.recent.accessionNumber is missing');
  const column = (name: string) => {
    const values = recent[name];
    if (!Array.isArray(values) || values.length !== accessions.length) {
      throw new InputError(file, undefined, `filings.recent.${name} is not aligned with accessionNumber`);
    }
    return values as string[];
  };
  const [forms, dates, reports, docs] = ['form', 'filingDate', 'reportDate', 'primaryDocument'].map(column) as [string[], string[], string[], string[]];
  return accessions.map((accession, i) => ({
    accession_number: String(accession),
    cik: Number(doc.cik),
    company_name: doc.name,
    form_type: forms[i]!,
    date_filed: dates[i]!,
    file_name: null,
    report_date: reports[i] || null,
    primary_document: docs[i] || null,
    origin: 'submissions' as const,
  }));
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
    {
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
      indexes: [['form_type']],
      rows: () => secFilings(inputDir),
    },
  ];
}

/** Submissions are richer than index rows, so they win when both list the same filing. */
async function* secFilings(inputDir: string): AsyncGenerator<Row> {
  const seen = new Set<string>();
  const dir = join(inputDir, SUBMISSIONS_DIR);
  for (const name of (await readdir(dir)).filter((n) => /^CIK\d{10}\.json$/.test(n)).sort()) {
    const file = `${SUBMISSIONS_DIR}/${name}`;
    for (const filing of filingsFromSubmissions((await readJson(join(dir, name), file)) as Submissions, file)) {
      seen.add(`${filing.cik}/${filing.accession_number}`);
      yield { ...filing };
    }
  }
  for (const name of (await readdir(join(inputDir, 'sec'))).filter((n) => n.endsWith('.idx')).sort()) {
    for await (const filing of readMasterIndex(join(inputDir, 'sec', name), `sec/${name}`)) {
      if (!seen.has(`${filing.cik}/${filing.accession_number}`)) {
        seen.add(`${filing.cik}/${filing.accession_number}`);
        yield { ...filing };
      }
    }
  }
}
