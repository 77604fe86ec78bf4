/**
 * What the benchmark servers and drivers share: an API config on real PostgreSQL and Redis with
 * fresh secrets and a private Redis prefix, and a one-off statement on the database server.
 */
import { randomBytes } from 'node:crypto';
import knexModule from 'knex';
import { TEST_RUNNER_TOKEN } from '@uda/test-support/runner-harness';
import { type ApiConfig, parseApiConfig } from '../src/config.ts';

export function benchApiConfig(databaseUrl: string, redisUrl: string, extra: Record<string, string> = {}): ApiConfig {
  return parseApiConfig({
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: `uda-bench:${randomBytes(4).toString('hex')}:`,
    KEY_PEPPER: randomBytes(32).toString('hex'),
    KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    QUERY_RUNNER_TOKEN: TEST_RUNNER_TOKEN,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'silent',
    DATABASE_POOL_MAX: process.env.BENCH_POOL ?? '20',
    ...extra,
  });
}

/** Runs one statement (CREATE or DROP DATABASE, a reconciliation sum) on the server behind `url`. */
export async function onServer<Row = unknown>(url: string, sql: string): Promise<Row[]> {
  const admin = knexModule.knex({ client: 'pg', connection: url, pool: { min: 0, max: 1 } });
  try {
    return ((await admin.raw(sql)) as { rows: Row[] }).rows;
  } finally {
    await admin.destroy();
  }
}
