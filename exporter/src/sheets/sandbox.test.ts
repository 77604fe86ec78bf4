import { join } from 'node:path';
import { quoteLiteral } from '@uda/shared/duckdb';
import { openSandbox, type Sandbox } from './sandbox.ts';
import { tempFolder, type TempFolder } from '../../test/sheets-files.ts';

const limits = { memoryLimit: '128MB', threads: 1, maxTempSize: '64MB', timeoutMs: 10_000 };
let folder: TempFolder;
let sandbox: Sandbox;
let input: string;
let other: string;
let output: string;

beforeAll(async () => {
  folder = await tempFolder();
  input = await folder.write('upload.csv', 'a\n1\n');
  other = await folder.write('secret.csv', 'password\nhunter2\n');
  output = join(folder.dir, 'out.parquet');
  sandbox = await openSandbox({ inputPath: input, outputPath: output, tempDir: join(folder.dir, 'tmp') }, limits);
});
afterAll(async () => {
  sandbox.close();
  await folder.remove();
});

describe('the ingestion sandbox', () => {
  it('reads the upload and writes the output', async () => {
    await sandbox.query(`COPY (SELECT * FROM read_csv(${quoteLiteral(input)})) TO ${quoteLiteral(output)} (FORMAT parquet)`);
    expect(await sandbox.query(`SELECT count(*)::INTEGER AS n FROM read_parquet(${quoteLiteral(output)})`)).toEqual([{ n: 1 }]);
  });

  it('refuses to read another file, even in the same folder', async () => {
    await expect(sandbox.query(`SELECT * FROM read_csv(${quoteLiteral(other)})`)).rejects.toThrow(/Permission Error/);
    await expect(sandbox.query(`SELECT * FROM glob(${quoteLiteral(join(folder.dir, '*'))})`)).rejects.toThrow(/Permission Error/);
  });

  it('refuses to write anywhere but the output', async () => {
    await expect(sandbox.query(`COPY (SELECT 1) TO ${quoteLiteral(join(folder.dir, 'x.parquet'))} (FORMAT parquet)`)).rejects.toThrow(/Permission Error/);
  });

  it('refuses to lift its own limits', async () => {
    await expect(sandbox.query('SET enable_external_access = true')).rejects.toThrow(/locked/);
    await expect(sandbox.query(`SET allowed_paths = [${quoteLiteral(other)}]`)).rejects.toThrow(/locked/);
    await expect(sandbox.query(`SET memory_limit = '8GB'`)).rejects.toThrow(/locked/);
  });

  it('stops a query at the time limit with a user-safe reason', async () => {
    const quick = await openSandbox({ inputPath: input, outputPath: output, tempDir: join(folder.dir, 'tmp2') }, { ...limits, timeoutMs: 200 });
    try {
      await expect(quick.query('SELECT count(*) FROM range(10000000000) a')).rejects.toThrow('The file took longer than 1 s to process.');
    } finally {
      quick.close();
    }
  });
});
