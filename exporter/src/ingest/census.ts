/**
 * Census population estimates in the Bureau's CSV layout. The county file is Latin-1
 * (`Doña Ana County`). Codes keep their leading zeros, so they stay text; rates (`R…`) are
 * decimals; every other column is a count.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { csvSource, type CsvSql } from './csv-sql.ts';
import { ident, sqlTable } from './sql-source.ts';
import { InputError, type TableSpec } from './table-spec.ts';

const CODE_COLUMNS = new Set(['SUMLEV', 'REGION', 'DIVISION', 'STATE', 'COUNTY']);
const NAME_COLUMNS = new Set(['NAME', 'STNAME', 'CTYNAME']);

interface CensusFile {
  readonly table: string;
  readonly file: string;
  readonly encoding: 'utf-8' | 'latin-1';
  readonly key: readonly string[];
}

const FILES: readonly CensusFile[] = [
  { table: 'census_states', file: 'census/NST-EST2023-ALLDATA.csv', encoding: 'utf-8', key: ['sumlev', 'region', 'division', 'state'] },
  { table: 'census_counties', file: 'census/co-est2019-alldata.csv', encoding: 'latin-1', key: ['state', 'county'] },
];

export function columnType(column: string): string {
  if (CODE_COLUMNS.has(column) || NAME_COLUMNS.has(column)) return 'VARCHAR';
  if (/^R[A-Z]+\d{4}$/.test(column)) return 'DOUBLE';
  return 'BIGINT';
}

export async function censusTables(inputDir: string): Promise<TableSpec[]> {
  return Promise.all(FILES.map((spec) => censusTable(inputDir, spec)));
}

async function censusTable(inputDir: string, spec: CensusFile): Promise<TableSpec> {
  const path = join(inputDir, spec.file);
  const header = await readHeader(path, spec.file);
  // The table's columns are the header's, lower-cased.
  const source: CsvSql = {
    file: spec.file,
    columns: Object.fromEntries(header.map((name) => [name, columnType(name)])),
    encoding: spec.encoding,
    select: header.map((name) => `${ident(name)} AS ${ident(name.toLowerCase())}`).join(', '),
  };
  return sqlTable({
    name: spec.table,
    columns: Object.fromEntries(header.map((name) => [name.toLowerCase(), columnType(name)])),
    primaryKey: spec.key,
    indexes: spec.table === 'census_counties' ? [['stname'], ['ctyname']] : [['name']],
  }, csvSource(inputDir, source));
}

async function readHeader(path: string, file: string): Promise<string[]> {
  const lines = createInterface({ input: createReadStream(path, { encoding: 'latin1' }), crlfDelay: Infinity });
  for await (const line of lines) {
    lines.close();
    const names = line.split(',').map((s) => s.trim());
    if (!names.includes('SUMLEV') || !names.includes('STATE')) throw new InputError(file, 1, 'not a Census estimates header');
    for (const name of names) {
      if (!/^[A-Z][A-Z0-9_]*$/.test(name)) throw new InputError(file, 1, `unexpected column name ${JSON.stringify(name)}`);
    }
    return names;
  }
  throw new InputError(file, 1, 'file is empty');
}
