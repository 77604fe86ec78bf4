/**
 * Everything a connected-sheet route test needs, real and per file: a fresh PostgreSQL database
 * (API harness), a bucket on the S3-compatible server holding a published service database, a
 * query-runner child process on it, and the sheets worker in-process on the same database.
 */
import { pino } from 'pino';
import { buildFixtureDb, publishDatabase, tempPath } from './runner-fixtures.ts';
import { type ChildRunner, redisPrefix, runnerEnv, startChild, waitReady } from './runner-harness.ts';
import { createTestBucket, type TestBucket } from './s3.ts';
import { type SheetsWorker, startSheetsWorker } from '@uda/exporter/sheets/worker';
import { type StartOptions, type TestApi, type TestContext, openTestContext } from './api-harness.ts';

/** The sheets worker with test settings: fast polling, the product's upload and size limits. */
export function startTestSheetsWorker(db: TestContext['db'], store: TestBucket['store']): SheetsWorker {
  return startSheetsWorker({
    db,
    store,
    logger: pino({ level: 'silent' }),
    settings: {
      pollMs: 50,
      leaseSeconds: 60,
      maxAttempts: 3,
      limits: { maxBytes: 50 * 1024 * 1024, maxRows: 1_000_000, maxDataBytes: 512 * 1024 * 1024, memoryLimit: '256MB', threads: 1, maxTempSize: '256MB', timeoutMs: 30_000 },
    },
  });
}

export interface SheetEnv {
  readonly ctx: TestContext;
  readonly bucket: TestBucket;
  readonly runner: ChildRunner;
  /** An API on this file's database, bucket and runner; the caller closes it. */
  start(options?: StartOptions): Promise<TestApi>;
  close(): Promise<void>;
}

/** `runnerConfig` adds runner settings, e.g. a short QUERY_TIMEOUT_MS. */
export async function openSheetEnv(label: string, runnerConfig: Record<string, string> = {}): Promise<SheetEnv> {
  const ctx = await openTestContext();
  const bucket = await createTestBucket(label);
  await publishDatabase(bucket.store, await buildFixtureDb(tempPath('service.db'), { books: 50 }));
  const runner = await startChild(await runnerEnv(bucket.env, { REDIS_KEY_PREFIX: redisPrefix(label), QUERY_TIMEOUT_MS: '30000', ...runnerConfig }));
  await waitReady(runner.url);
  const worker = startTestSheetsWorker(ctx.db, bucket.store);
  return {
    ctx,
    bucket,
    runner,
    start: (options = {}) =>
      ctx.start({ ...options, config: { ...bucket.env, QUERY_RUNNER_URLS: runner.url, ...options.config } }),
    async close() {
      await worker.stop();
      runner.child.kill('SIGTERM');
      await runner.exited;
      await ctx.close();
      await bucket.remove();
    },
  };
}
