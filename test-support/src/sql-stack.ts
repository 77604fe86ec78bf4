/**
 * Test fixture for the SQL and export routes: one S3 bucket with a real export built by the
 * exporter CLI, query-runner child processes on that bucket, and an API per test (harness) that
 * points at them. Everything real: PostgreSQL, Redis, the S3-compatible server, DuckDB.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChildRunner, counterValue, redisPrefix, runnerEnv, startChild, waitReady } from './runner-harness.ts';
import { createTestBucket, type TestBucket } from './s3.ts';
import { NODE_BIN, openTestContext, type StartOptions, type TestApi, type TestContext } from './api-harness.ts';

export interface Stack {
  readonly ctx: TestContext;
  readonly bucket: TestBucket;
  readonly runners: ChildRunner[];
  /** The runners' Redis key prefix (locks, result index). */
  readonly redisPrefix: string;
  start(options?: StartOptions): Promise<TestApi>;
  /** Queries executed on DuckDB, summed over the runners. */
  executions(): Promise<number>;
  close(): Promise<void>;
}

export async function openStack(
  label: string,
  options: { runners?: number; runnerEnv?: Record<string, string>; databaseServerUrl?: string } = {},
): Promise<Stack> {
  const ctx = await openTestContext({ databaseServerUrl: options.databaseServerUrl });
  const bucket = await createTestBucket(label);
  await buildExport(bucket.env);
  const prefix = redisPrefix(label);
  const runners: ChildRunner[] = [];
  for (let i = 0; i < (options.runners ?? 1); i++) {
    runners.push(await startChild(await runnerEnv(bucket.env, { REDIS_KEY_PREFIX: prefix, ...options.runnerEnv })));
  }
  for (const runner of runners) await waitReady(runner.url, 60_000);
  return {
    ctx,
    bucket,
    runners,
    redisPrefix: prefix,
    start: (startOptions = {}) =>
      ctx.start({ ...startOptions, config: { ...bucket.env, QUERY_RUNNER_URLS: runners.map((r) => r.url).join(','), ...startOptions.config } }),
    executions: async () => (await Promise.all(runners.map((r) => counterValue(r.metricsUrl, 'uda_query_executions_total')))).reduce((a, b) => a + b, 0),
    async close() {
      for (const runner of runners) {
        runner.child.kill('SIGKILL');
        await runner.exited;
      }
      await ctx.close();
      await bucket.remove();
    },
  };
}

/** Async on purpose: under `--runInBand` the local S3 server lives in this process's event loop. */
export async function buildExport(env: Record<string, string>): Promise<void> {
  const child = spawn(NODE_BIN, [join(process.cwd(), 'exporter/src/main.ts')], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: mkdtempSync(join(tmpdir(), 'uda-export-')), ...env, LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`export failed: ${stderr}`);
}

/**
 * The charge and refund rows of one account, once every API's journal is written: a window's
 * charge, like a lookup's, is spent from the account's credit lease and reaches the ledger with the
 * pod's next flush (every 250 ms); a flush's lookups are one row. The lease's own rows move credit, they charge nothing.
 */
export async function ledgerOf(ctx: TestContext, accountId: string): Promise<{ kind: string; amount_micro: string; idempotency_key: string }[]> {
  // Every started API's journal first (what each pod's 250 ms flush does).
  await ctx.flushBilling();
  return ctx.db('ledger').where({ account_id: accountId }).whereIn('kind', ['charge', 'refund']).orderBy('id').select('kind', 'amount_micro', 'idempotency_key');
}

export async function netCharged(ctx: TestContext, accountId: string): Promise<number> {
  return (await ledgerOf(ctx, accountId)).reduce((sum, row) => sum + Number(row.amount_micro), 0);
}
