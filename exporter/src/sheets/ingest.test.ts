import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { SheetIngestError } from './errors.ts';
import type { SheetFormat } from './formats.ts';
import { ingestSheet, type IngestLimits } from './ingest.ts';
import { duckdbRows, SALES_CSV, tempFolder, type TempFolder } from '../../test/sheets-files.ts';

const limits: IngestLimits = {
  maxBytes: 1024 * 1024, maxRows: 1_000_000, maxDataBytes: 256 * 1024 * 1024, memoryLimit: '256MB', threads: 1, maxTempSize: '256MB', timeoutMs: 30_000,
};
let folder: TempFolder;

beforeEach(async () => {
  folder = await tempFolder();
});
afterEach(async () => {
  await folder.remove();
});

async function ingest(name: string, content: string | Uint8Array, format: SheetFormat, overrides: Partial<IngestLimits> = {}) {
  const inputPath = await folder.write(name, content);
  const outputPath = join(folder.dir, 'out.parquet');
  const result = await ingestSheet({ inputPath, format, outputPath, tempDir: join(folder.dir, 'tmp'), limits: { ...limits, ...overrides } });
  return { result, outputPath };
}

async function failure(name: string, content: string | Uint8Array, format: SheetFormat, overrides: Partial<IngestLimits> = {}) {
  const error = await ingest(name, content, format, overrides).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SheetIngestError);
  return (error as Error).message;
}

const SALES_COLUMNS = [
  { name: 'order_id', type: 'BIGINT' },
  { name: 'amount', type: 'DOUBLE' },
  { name: 'order_date', type: 'DATE' },
  { name: 'customer_name', type: 'VARCHAR' },
];

describe('ingestSheet happy paths', () => {
  it('reads a CSV with detected types and normalised names into zstd Parquet', async () => {
    const { result, outputPath } = await ingest('s.csv', SALES_CSV, 'csv');
    expect(result).toEqual({ rowCount: 2, columns: SALES_COLUMNS });
    const rows = await duckdbRows(`SELECT * FROM read_parquet('${outputPath}') ORDER BY order_id`);
    expect(rows[1]).toEqual({ order_id: '2', amount: 7.25, order_date: '2024-02-03', customer_name: 'Grace, H.' });
    const codecs = await duckdbRows(`SELECT DISTINCT compression FROM parquet_metadata('${outputPath}')`);
    expect(codecs).toEqual([{ compression: 'ZSTD' }]);
  });

  it('reads a TSV and a UTF-8 BOM', async () => {
    const tsv = '\uFEFFOrder ID\tAmount (€)\tOrder Date\tCustomer Name\n1\t10.50\t2024-01-02\tAda\n2\t7.25\t2024-02-03\tGrace, H.\n';
    const { result } = await ingest('s.tsv', tsv, 'tsv');
    expect(result).toEqual({ rowCount: 2, columns: SALES_COLUMNS });
  });

  it('reads a JSON array of objects', async () => {
    const json = JSON.stringify([
      { 'Order ID': 1, 'Amount (€)': 10.5, 'Order Date': '2024-01-02', 'Customer Name': 'Ada' },
      { 'Order ID': 2, 'Amount (€)': 7.25, 'Order Date': '2024-02-03', 'Customer Name': 'Grace' },
    ]);
    const { result } = await ingest('s.json', json, 'json');
    expect(result).toEqual({ rowCount: 2, columns: SALES_COLUMNS });
  });

  it('reads NDJSON', async () => {
    const ndjson = '{"id":1,"price":1.5,"day":"2024-01-02","name":"a"}\n{"id":2,"price":2.25,"day":"2024-03-04","name":"b"}\n';
    const { result } = await ingest('s.ndjson', ndjson, 'ndjson');
    expect(result.columns.map((c) => c.type)).toEqual(['BIGINT', 'DOUBLE', 'DATE', 'VARCHAR']);
    expect(result.rowCount).toBe(2);
  });

  it('reads Parquet keeping its types, decimals included', async () => {
    const source = join(folder.dir, 'in.parquet');
    await duckdbRows(`COPY (SELECT 1::INTEGER AS "ID", 12.34::DECIMAL(10,2) AS "Price", DATE '2024-01-02' AS "Day", 'x' AS "Label") TO '${source}'`);
    const result = await ingestSheet({ inputPath: source, format: 'parquet', outputPath: join(folder.dir, 'out.parquet'), tempDir: join(folder.dir, 'tmp'), limits });
    expect(result).toEqual({
      rowCount: 1,
      columns: [
        { name: 'id', type: 'INTEGER' },
        { name: 'price', type: 'DECIMAL(10,2)' },
        { name: 'day', type: 'DATE' },
        { name: 'label', type: 'VARCHAR' },
      ],
    });
  });

  it('makes duplicate and empty headers unique', async () => {
    const { result } = await ingest('d.csv', 'Name,name,,x\na,b,c,d\n', 'csv');
    expect(result.columns.map((c) => c.name)).toEqual(['name', 'name_2', 'column_3', 'x']);
  });
});

describe('ingestSheet refusals', () => {
  it('refuses an unterminated quote naming the line', async () => {
    expect(await failure('q.csv', 'a,b\n1,2\n3,"x\n4,5\n', 'csv')).toBe('The CSV file is malformed: a quoted value is never closed (line 3).');
  });

  it('refuses a row with too many fields naming the line', async () => {
    expect(await failure('n.csv', 'a,b\n1,2\n3,4,5\n', 'csv')).toBe('The CSV file is malformed: a row has a different number of fields than the header (line 3).');
  });

  it('refuses UTF-16 and Latin-1 text', async () => {
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('a,b\n1,2\n', 'utf16le')]);
    expect(await failure('u16.csv', utf16, 'csv')).toMatch(/^The file is not UTF-8 encoded/);
    expect(await failure('l1.csv', Buffer.from('name\ncaf\xe9\n', 'latin1'), 'csv')).toMatch(/^The file is not UTF-8 encoded/);
  });

  it('refuses an empty file as having no columns', async () => {
    expect(await failure('e.csv', '', 'csv')).toBe('The file is empty: it has no columns.');
  });

  it('refuses JSON objects without keys as having no columns', async () => {
    expect(await failure('e.json', '[{}]', 'json')).toBe('The file must be a JSON array of objects, one per row.');
  });

  it('refuses a file over the limit before parsing it', async () => {
    expect(await failure('big.csv', 'not even csv \u0000', 'csv', { maxBytes: 4 })).toBe('The file is larger than the 0 MB limit.');
  });

  it('refuses invalid JSON and NDJSON', async () => {
    expect(await failure('b.json', '[{"a":1},', 'json')).toMatch(/^The file is not valid JSON/);
    expect(await failure('b.ndjson', '{"a":1}\n{"a":\n', 'ndjson')).toMatch(/^The file is not valid NDJSON/);
  });

  it('refuses a file that is not Parquet', async () => {
    expect(await failure('x.parquet', 'a,b\n1,2\n', 'parquet')).toBe('The file is not a valid Parquet file.');
  });

  it('refuses a Parquet column of a nested type, naming it', async () => {
    const source = join(folder.dir, 'nested.parquet');
    await duckdbRows(`COPY (SELECT 1 AS id, [1, 2] AS "Tags") TO '${source}'`);
    const error = await ingestSheet({ inputPath: source, format: 'parquet', outputPath: join(folder.dir, 'o.parquet'), tempDir: join(folder.dir, 't'), limits }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SheetIngestError);
    expect((error as Error).message).toMatch(/^Column "Tags" has an unsupported type \(list\)/);
  });

  it('refuses Parquet INTERVAL and BLOB columns', async () => {
    const source = join(folder.dir, 'iv.parquet');
    await duckdbRows(`COPY (SELECT INTERVAL 1 DAY AS span) TO '${source}'`);
    const error = await ingestSheet({ inputPath: source, format: 'parquet', outputPath: join(folder.dir, 'o.parquet'), tempDir: join(folder.dir, 't'), limits }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/^Column "span" has an unsupported type \(interval\)/);
  });
});

describe('sheet bombs: bounded after decompression', () => {
  /** A tiny Parquet file that expands to `rows` rows (constant values compress to almost nothing). */
  async function bomb(rows: number, value = "'x'"): Promise<string> {
    const path = join(folder.dir, 'bomb.parquet');
    await duckdbRows(`COPY (SELECT ${value} AS v FROM range(${rows})) TO '${path}' (FORMAT parquet, COMPRESSION zstd)`);
    return path;
  }

  it('fails a small Parquet file with 100 M constant rows with a clear row-limit error', async () => {
    const inputPath = await bomb(100_000_000);
    expect((await stat(inputPath)).size).toBeLessThan(1024 * 1024);
    const error = await ingestSheet({ inputPath, format: 'parquet', outputPath: join(folder.dir, 'out.parquet'), tempDir: join(folder.dir, 'tmp'), limits }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SheetIngestError);
    expect((error as Error).message).toBe('The file has more than 1,000,000 rows, the limit for a sheet.');
  });

  it('fails a file whose values expand past the data-size ceiling', async () => {
    const inputPath = await bomb(20_000, "repeat('x', 1000)");
    const error = await ingestSheet({
      inputPath, format: 'parquet', outputPath: join(folder.dir, 'out.parquet'), tempDir: join(folder.dir, 'tmp'), limits: { ...limits, maxDataBytes: 8 * 1024 * 1024 },
    }).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(SheetIngestError);
    expect((error as Error).message).toBe('The file holds more than 8 MB of data once decompressed, the limit for a sheet.');
  });
});
