/**
 * The worker as its own process (`main.ts`): killed mid-ingest, its job is retried by another
 * worker once the lease expires, and completes; SIGTERM stops an idle worker cleanly.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { createTestBucket, type TestBucket } from '@uda/test-support/s3';
import { startSheetsWorker } from './worker.ts';
import { createSheet, createTestDatabase, sheetRow, type DatasetRecord, type TestDatabase } from '../../test/sheets-db.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const NODE = join(ROOT, 'node_modules', '.bin', 'node');
const LEASE_SECONDS = 2;
let database: TestDatabase;
let bucket: TestBucket;

beforeAll(async () => {
  database = await createTestDatabase();
  bucket = await createTestBucket('sheets-crash');
});
afterAll(async () => {
  await database.drop();
  await bucket.remove();
});

function spawnWorker(logLevel = 'silent'): ChildProcess {
  const env = {
    PATH: process.env.PATH,
    ...bucket.env,
    DATABASE_URL: database.url,
    SHEETS_POLL_MS: '50',
    SHEETS_LEASE_SECONDS: String(LEASE_SECONDS),
    // The lease must outlast the time limit; this worker is killed long before either matters.
    SHEETS_TIMEOUT_MS: '1500',
    LOG_LEVEL: logLevel,
  };
  return spawn(NODE, [join(ROOT, 'exporter/src/sheets/main.ts')], { env, stdio: ['ignore', 'pipe', 'ignore'] });
}

/** Resolves when the worker logs that it started, i.e. its signal handlers are installed. */
function started(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('sheets worker started')) resolve();
    });
  });
}

async function waitForRow(id: string, done: (row: DatasetRecord) => boolean, intervalMs = 10): Promise<DatasetRecord> {
  for (let i = 0; i < 3000; i++) {
    const row = await sheetRow(database.db, id);
    if (done(row)) return row;
    await sleep(intervalMs);
  }
  throw new Error('the sheet never reached the expected state');
}

/** Big enough that ingestion takes far longer than one 10 ms poll of the row. */
function largeCsv(rows: number): string {
  const lines = ['id,amount,day,label'];
  for (let i = 0; i < rows; i++) lines.push(`${i},${(i % 1000) / 4},2024-01-${String((i % 28) + 1).padStart(2, '0')},label number ${i}`);
  return `${lines.join('\n')}\n`;
}

const exited = (child: ChildProcess) => new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

describe('sheets worker process', () => {
  it('a worker killed mid-ingest: the job is retried after its lease and completes', async () => {
    const id = await createSheet(database.db, bucket.store, { content: largeCsv(100_000), format: 'csv' });
    const child = spawnWorker();
    child.stdout?.resume();
    // Stops too if the worker finished first, so that the assertion below fails clearly instead of timing out.
    const claimed = await waitForRow(id, (row) => row.status !== 'processing' || (row.attempts === 1 && row.locked_until !== null));
    child.kill('SIGKILL');
    await exited(child);
    expect(claimed.status).toBe('processing');
    expect(await sheetRow(database.db, id)).toMatchObject({ status: 'processing', attempts: 1 });

    const worker = startSheetsWorker({
      db: database.db,
      store: bucket.store,
      logger: pino({ level: 'silent' }),
      settings: {
        pollMs: 100,
        leaseSeconds: 30,
        maxAttempts: 3,
        limits: { maxBytes: 50 * 1024 * 1024, maxRows: 1_000_000, maxDataBytes: 512 * 1024 * 1024, memoryLimit: '512MB', threads: 2, maxTempSize: '1GB', timeoutMs: 30_000 },
      },
    });
    try {
      const row = await waitForRow(id, (r) => r.status !== 'processing', 50);
      expect(row).toMatchObject({ status: 'ready', attempts: 2, row_count: '100000', locked_until: null });
    } finally {
      await worker.stop();
    }
  });

  it('SIGTERM stops an idle worker with exit code 0', async () => {
    const child = spawnWorker('info');
    const code = exited(child);
    await started(child);
    child.kill('SIGTERM');
    expect(await code).toBe(0);
  });
});
