import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { createTestBucket, type TestBucket } from '@uda/test-support/s3';
import { giveUpMessage, claimJob } from './queue.ts';
import { NOT_UTF8_MESSAGE } from './encoding.ts';
import { processJob, runOnce, type SheetsWorkerDeps, type SheetsWorkerSettings } from './worker.ts';
import { createSheet, createTestDatabase, reupload, sheetRow, type TestDatabase } from '../../test/sheets-db.ts';
import { duckdbRows, SALES_CSV, tempFolder } from '../../test/sheets-files.ts';

const settings: SheetsWorkerSettings = {
  pollMs: 50,
  leaseSeconds: 60,
  maxAttempts: 3,
  limits: { maxBytes: 1024 * 1024, maxRows: 1_000_000, maxDataBytes: 512 * 1024 * 1024, memoryLimit: '256MB', threads: 1, maxTempSize: '256MB', timeoutMs: 30_000 },
};
let database: TestDatabase;
let bucket: TestBucket;
let deps: SheetsWorkerDeps;

beforeAll(async () => {
  database = await createTestDatabase();
  bucket = await createTestBucket('sheets');
  deps = { db: database.db, store: bucket.store, logger: pino({ level: 'silent' }), settings };
});
afterAll(async () => {
  await database.drop();
  await bucket.remove();
});
beforeEach(async () => {
  await database.db('datasets').delete();
});

async function ingestOne(content: string | Uint8Array, format: 'csv' | 'tsv' | 'json' | 'ndjson' | 'parquet') {
  const id = await createSheet(database.db, bucket.store, { content, format });
  expect(await runOnce(deps)).toBe(true);
  return { id, row: await sheetRow(database.db, id) };
}

async function parquetRows(key: string): Promise<Record<string, unknown>[]> {
  const folder = await tempFolder();
  try {
    const object = await bucket.store.get(key);
    const chunks: Buffer[] = [];
    for await (const chunk of object!.body) chunks.push(chunk as Buffer);
    const path = await folder.write('x.parquet', Buffer.concat(chunks));
    return await duckdbRows(`SELECT * FROM read_parquet('${path}')`);
  } finally {
    await folder.remove();
  }
}

async function keysOf(id: string): Promise<string[]> {
  return (await bucket.store.list('sheets/')).map((o) => o.key).filter((key) => key.includes(`/${id}/`));
}

const TYPES = ['BIGINT', 'DOUBLE', 'DATE', 'VARCHAR'];

describe('sheets worker: every format becomes a ready sheet', () => {
  it('CSV: ready with rows, typed columns and the Parquet under sheets/<account>/<id>/<version>', async () => {
    const { id, row } = await ingestOne(SALES_CSV, 'csv');
    expect(row).toMatchObject({ status: 'ready', error: null, row_count: '2', locked_until: null, attempts: 1 });
    expect(row.columns).toEqual([
      { name: 'order_id', type: 'BIGINT' },
      { name: 'amount', type: 'DOUBLE' },
      { name: 'order_date', type: 'DATE' },
      { name: 'customer_name', type: 'VARCHAR' },
    ]);
    expect(row.parquet_key).toMatch(new RegExp(`^sheets/[^/]+/${id}/1\\.parquet$`));
    expect(await parquetRows(row.parquet_key!)).toContainEqual({ order_id: '1', amount: 10.5, order_date: '2024-01-02', customer_name: 'Ada' });
  });

  it('TSV', async () => {
    const { row } = await ingestOne('id\tprice\tday\tname\n1\t2.5\t2024-01-02\tx\n', 'tsv');
    expect(row.columns?.map((c) => c.type)).toEqual(TYPES);
  });

  it('JSON array', async () => {
    const { row } = await ingestOne('[{"id":1,"price":2.5,"day":"2024-01-02","name":"x"}]', 'json');
    expect(row.columns?.map((c) => c.type)).toEqual(TYPES);
  });

  it('NDJSON', async () => {
    const { row } = await ingestOne('{"id":1,"price":2.5,"day":"2024-01-02","name":"x"}\n', 'ndjson');
    expect(row.columns?.map((c) => c.type)).toEqual(TYPES);
  });

  it('Parquet', async () => {
    const folder = await tempFolder();
    const path = join(folder.dir, 'p.parquet');
    await duckdbRows(`COPY (SELECT 7::BIGINT AS "Id", 1.25::DECIMAL(9,2) AS "Price", DATE '2024-01-02' AS "Day", 'x' AS "Name") TO '${path}'`);
    const { row } = await ingestOne(await readFile(path), 'parquet');
    await folder.remove();
    expect(row.columns).toEqual([
      { name: 'id', type: 'BIGINT' },
      { name: 'price', type: 'DECIMAL(9,2)' },
      { name: 'day', type: 'DATE' },
      { name: 'name', type: 'VARCHAR' },
    ]);
  });
});

describe('sheets worker: a bad file fails with a user-safe message', () => {
  it.each([
    ['malformed CSV', 'a,b\n1,"x\n', 'csv', 'The CSV file is malformed: a quoted value is never closed (line 2).'],
    ['Latin-1 CSV', Buffer.from('name\ncaf\xe9\n', 'latin1'), 'csv', NOT_UTF8_MESSAGE],
    ['empty file', '', 'csv', 'The file is empty: it has no columns.'],
    ['file over the limit', 'x'.repeat(settings.limits.maxBytes + 1), 'csv', 'The file is larger than the 1 MB limit.'],
    ['invalid JSON', '[{"a":1},', 'json', 'The file is not valid JSON: it ends before the array is closed.'],
    ['Parquet that is not Parquet', 'a,b\n', 'parquet', 'The file is not a valid Parquet file.'],
  ] as const)('%s', async (_case, content, format, message) => {
    const { row } = await ingestOne(content, format);
    expect(row).toMatchObject({ status: 'failed', error: message, locked_until: null, parquet_key: null });
  });
});

describe('sheets worker: jobs', () => {
  it('two workers racing for one job: exactly one ingests it', async () => {
    const id = await createSheet(database.db, bucket.store, { content: SALES_CSV, format: 'csv' });
    const other = database.connect();
    try {
      const results = await Promise.all([runOnce(deps), runOnce({ ...deps, db: other })]);
      expect(results.filter(Boolean)).toHaveLength(1);
    } finally {
      await other.destroy();
    }
    expect(await sheetRow(database.db, id)).toMatchObject({ status: 'ready', attempts: 1 });
  });

  // Before fair claims, an account's backlog held every later upload of every other account.
  it("serves accounts in turn: one account's backlog holds up another's upload by one job at most", async () => {
    const heavy = randomUUID();
    const light = randomUUID();
    for (let i = 0; i < 4; i++) await createSheet(database.db, bucket.store, { content: SALES_CSV, format: 'csv' }, heavy);
    const lightId = await createSheet(database.db, bucket.store, { content: SALES_CSV, format: 'csv' }, light);
    expect(await runOnce(deps)).toBe(true);
    const next = await claimJob(database.db, settings);
    expect(next).toMatchObject({ kind: 'claimed', job: { id: lightId, accountId: light } });
  });

  it('never gives an account a second worker while another account waits', async () => {
    const heavy = randomUUID();
    const light = randomUUID();
    for (let i = 0; i < 4; i++) await createSheet(database.db, bucket.store, { content: SALES_CSV, format: 'csv' }, heavy);
    const lightId = await createSheet(database.db, bucket.store, { content: SALES_CSV, format: 'csv' }, light);
    expect(await claimJob(database.db, settings)).toMatchObject({ kind: 'claimed', job: { accountId: heavy } });
    expect(await claimJob(database.db, settings)).toMatchObject({ kind: 'claimed', job: { id: lightId, accountId: light } });
    expect(await claimJob(database.db, settings)).toMatchObject({ kind: 'claimed', job: { accountId: heavy } });
  });

  it('marks a job that used all its attempts failed instead of retrying it again', async () => {
    const id = await createSheet(database.db, bucket.store, { content: SALES_CSV, format: 'csv' });
    // Three workers claimed it and died: attempts used up, last lease expired.
    await database.db('datasets').where({ id }).update({ attempts: 3, locked_until: database.db.raw(`now() - interval '1 second'`) });
    expect(await runOnce(deps)).toBe(true);
    expect(await sheetRow(database.db, id)).toMatchObject({ status: 'failed', error: giveUpMessage(3), locked_until: null });
    expect(giveUpMessage(3)).toBe('The file could not be processed after 3 attempts.');
  });

  it('leaves a job whose lease is still held alone', async () => {
    const id = await createSheet(database.db, bucket.store, { content: SALES_CSV, format: 'csv' });
    await database.db('datasets').where({ id }).update({ attempts: 1, locked_until: database.db.raw(`now() + interval '1 minute'`) });
    expect(await runOnce(deps)).toBe(false);
    expect(await sheetRow(database.db, id)).toMatchObject({ status: 'processing', attempts: 1 });
  });

  it('a re-upload during ingestion discards the older result and ingests the new version', async () => {
    const id = await createSheet(database.db, bucket.store, { content: SALES_CSV, format: 'csv' });
    const claim = await claimJob(database.db, settings);
    if (claim.kind !== 'claimed') throw new Error('expected a claim');
    await reupload(database.db, bucket.store, id, { content: 'only\n1\n', format: 'csv' });
    await processJob(deps, claim.job);
    expect(await sheetRow(database.db, id)).toMatchObject({ status: 'processing', version: 2, parquet_key: null });
    expect(await keysOf(id)).toEqual([]);
    expect(await runOnce(deps)).toBe(true);
    const row = await sheetRow(database.db, id);
    expect(row).toMatchObject({ status: 'ready', version: 2, row_count: '1', columns: [{ name: 'only', type: 'BIGINT' }] });
    expect(row.parquet_key).toMatch(/\/2\.parquet$/);
  });

  it('deletes the previous version’s Parquet once a newer one is ready', async () => {
    const { id, row: first } = await ingestOne(SALES_CSV, 'csv');
    await reupload(database.db, bucket.store, id, { content: SALES_CSV, format: 'csv' });
    expect(await runOnce(deps)).toBe(true);
    const second = await sheetRow(database.db, id);
    expect(second.parquet_key).not.toBe(first.parquet_key);
    expect(await keysOf(id)).toEqual([second.parquet_key]);
  });
});
