/**
 * Test harness (STYLE §10): a fresh PostgreSQL database per test file, a Redis client per file,
 * and per test a freshly started API on 127.0.0.1:0 with its own Redis key prefix, plus fresh
 * accounts and keys on demand.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import knexModule from 'knex';
import { Redis } from 'ioredis';
import type { Tier } from '@uda/shared/catalog';
import type { Logger } from '@uda/shared/logger';
import { TEST_RUNNER_TOKEN } from './runner-harness.ts';
import { type AppOptions, buildApp } from '@uda/api/app';
import { type ApiConfig, parseApiConfig } from '@uda/api/config';
import { type Db, migrate, openDb } from '@uda/api/db';
import { DEFAULT_LIMITS, type Limits } from '@uda/api/limits';
import { parseUsd } from '@uda/api/money';
import { listen } from '@uda/api/server';
import { type Services, buildServices, closeServices } from '@uda/api/services';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const TEST_PEPPER = 'test-pepper-'.padEnd(40, 'x');
export const TEST_ENCRYPTION_KEY = 'ab'.repeat(32);
export const NODE_BIN = join(process.cwd(), 'node_modules/.bin/node');

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** `serverUrl`: a server of the test's own (`own-servers.ts`) instead of the shared one. */
export async function createTestDatabase(serverUrl = TEST_DATABASE_URL): Promise<TestDatabase> {
  const name = `uda_test_${randomBytes(6).toString('hex')}`;
  await onServer(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await onServer(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

async function onServer(serverUrl: string, sql: string): Promise<void> {
  const admin = knexModule.knex({ client: 'pg', connection: serverUrl, pool: { min: 0, max: 1 } });
  try {
    await admin.raw(sql);
  } finally {
    await admin.destroy();
  }
}

export function uniquePrefix(): string {
  return `uda-test:${randomBytes(6).toString('hex')}:`;
}

export function testConfig(overrides: Record<string, string> = {}): ApiConfig {
  return parseApiConfig({
    LOG_LEVEL: 'silent',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'uda-api-test-')),
    KEY_PEPPER: TEST_PEPPER,
    KEY_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    QUERY_RUNNER_TOKEN: TEST_RUNNER_TOKEN,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: uniquePrefix(),
    // Off unless a test turns it on: a background copy would race the cache hits and misses, and
    // the S3 reads, that other tests count.
    OBJECT_CACHE_WARM_CONCURRENCY: '0',
    ...overrides,
  });
}

export interface TestAccount {
  accountId: string;
  apiKey: string;
}

export interface TestApi {
  url: string;
  services: Services;
  /** A fresh account with an active key; `usd` sets the grant bucket. */
  account(options?: { tier?: Tier; usd?: string }): Promise<TestAccount>;
  get(path: string, init?: RequestInit & { key?: string }): Promise<Response>;
  close(): Promise<void>;
}

export interface StartOptions extends AppOptions {
  limits?: Partial<Limits>;
  config?: Record<string, string>;
  /** Use in-process limiters instead of Redis. */
  memoryLimiters?: boolean;
  /** Connect to `config.REDIS_URL` with the service's own client instead of the file's shared one. */
  useOwnRedis?: boolean;
  /** Where the service logs (tests that read the access log). */
  logger?: Logger;
}

export interface TestContext {
  db: Db;
  database: TestDatabase;
  redis: Redis;
  start(options?: StartOptions): Promise<TestApi>;
  /** Writes every started API's billing journal to the ledger (what each pod's 250 ms flush does). */
  flushBilling(): Promise<void>;
  close(): Promise<void>;
}

/** Per test file: `beforeAll(async () => (ctx = await openTestContext()))`, `afterAll(() => ctx.close())`. */
export async function openTestContext(options: { databaseServerUrl?: string } = {}): Promise<TestContext> {
  const database = await createTestDatabase(options.databaseServerUrl);
  const db = openDb({ databaseUrl: database.url, poolMax: 10, dataDir: tmpdir() });
  await migrate(db);
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  await redis.ping();
  const open = new Set<TestApi>();
  return {
    db,
    database,
    redis,
    async start(options = {}) {
      const parsed = testConfig({ DATABASE_URL: database.url, ...options.config });
      const config: ApiConfig = options.memoryLimiters ? { ...parsed, REDIS_URL: undefined } : parsed;
      const services = await buildServices(config, {
        db,
        redis: options.memoryLimiters || options.useOwnRedis ? undefined : redis,
        limits: { ...DEFAULT_LIMITS, ...options.limits },
        defaultMetrics: false,
        logger: options.logger,
      });
      const listening = await listen(buildApp(services, options), 0, '127.0.0.1');
      const api: TestApi = {
        url: listening.url,
        services,
        async account({ tier = 'free', usd } = {}) {
          const account = await services.accounts.create({ email: `t-${randomBytes(4).toString('hex')}@example.com`, tier });
          if (usd !== undefined) await services.accounts.setGrant(account.id, parseUsd(usd));
          return { accountId: account.id, apiKey: await services.keys.create(account.id, 'test') };
        },
        get(path, init = {}) {
          const { key, ...rest } = init;
          const headers = new Headers(rest.headers);
          if (key) headers.set('authorization', `Bearer ${key}`);
          return fetch(`${listening.url}${path}`, { ...rest, headers });
        },
        async close() {
          // Once: a file's afterAll may close it after the context's close already did (and closed the database).
          if (!open.delete(api)) return;
          await listening.close();
          listening.server.closeAllConnections();
          await closeServices(services, { keepDb: true });
        },
      };
      open.add(api);
      return api;
    },
    async flushBilling() {
      for (const api of [...open]) await api.services.billing.writesDone();
      for (const api of [...open]) await api.services.billing.flush();
    },
    async close() {
      for (const api of [...open]) await api.close();
      redis.disconnect();
      await db.destroy();
      await database.drop();
    },
  };
}
