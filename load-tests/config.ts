/**
 * The mixed-load test's settings (`npm run load`), read once from the environment (STYLE §4).
 * PostgreSQL and Redis are shared servers: the run creates its own database and uses its own Redis
 * key prefix, and removes both at the end. With LOAD_FAULTS it starts servers of its own instead,
 * since a fault stops or flushes them.
 */
import { z } from 'zod';
import { parseConfig } from '@uda/shared/config';

/** The faults `LOAD_FAULTS` may name (`faults.ts` says what each does). */
export const FAULT_NAMES = ['redis-flush', 'redis-restart', 'redis-down', 'pg-restart', 'api-kill', 'api-term', 'runner-kill', 's3-down'] as const;
export type FaultName = (typeof FAULT_NAMES)[number];

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

export const loadEnv = z.object({
  LOAD_DURATION_S: int(1, 3_600).default(60).describe('How long the mixed traffic runs'),
  LOAD_ACCOUNTS: int(3, 100_000).default(1_000).describe('Accounts (each with a key and a top-off), spread over the three tiers'),
  LOAD_CONNECTIONS: int(2, 1_000).default(50).describe('Concurrent HTTP connections, spread over the two API processes'),
  LOAD_ABUSE_ACCOUNTS: int(0, 100)
    .default(1)
    .describe('Free-tier accounts that run the issue-22 attack beside the mix (uninterruptible queries, over and over); 0 runs the mix alone'),
  LOAD_ABUSE_QUERIES: int(1, 64).default(8).describe('Queries each attacking account sends at once'),
  LOAD_FAULTS: z
    .string()
    .default('')
    .transform((text) => text.split(',').map((name) => name.trim()).filter(Boolean))
    .pipe(z.array(z.enum(FAULT_NAMES)))
    .describe(`Faults injected one after the other mid-mix (comma list of ${FAULT_NAMES.join(', ')}); any fault runs the test on a PostgreSQL, Redis and s3rver of its own`),
  LOAD_FAULT_DOWN_S: int(1, 600).default(30).describe('How long redis-down and s3-down keep their server down'),
  LOAD_DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .default('postgres://postgres@127.0.0.1:5432/postgres')
    .describe('A PostgreSQL server URL with CREATE DATABASE rights; the run uses a fresh database on it'),
  LOAD_REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must be a redis:// URL').default('redis://127.0.0.1:6379').describe('Redis server'),
  S3_ENDPOINT: z.url().optional().describe('An S3-compatible server to use; unset starts s3rver in its own process'),
  S3_ACCESS_KEY_ID: z.string().default('S3RVER'),
  S3_SECRET_ACCESS_KEY: z.string().default('S3RVER'),
});

export type LoadConfig = z.infer<typeof loadEnv>;

export function parseLoadConfig(env: Record<string, string | undefined>): LoadConfig {
  return parseConfig(loadEnv, env);
}

/** The environment of a process the load test starts: this one's, with the given settings on top. */
export function childEnv(settings: Record<string, string>): Record<string, string | undefined> {
  return { ...process.env, ...settings };
}
