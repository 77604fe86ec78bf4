/** The sheets worker's settings, parsed once from the environment. */
import { z } from 'zod';
import { commonEnv, parseConfig } from '@uda/shared/config';
import { objectStoreEnv } from '@uda/shared/object-store';
import type { SheetsWorkerSettings } from './worker.ts';

export const sheetsWorkerConfigSchema = z.object({
  ...commonEnv,
  ...objectStoreEnv,
  DATABASE_URL: z.string().min(1).describe('PostgreSQL URL of the API database holding the datasets table (the job queue)'),
  SHEETS_POLL_MS: z.coerce.number().int().min(50).max(60_000).default(1000).describe('How often an idle sheets worker looks for a pending upload'),
  SHEETS_LEASE_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3600)
    .default(300)
    .describe('How long a claimed sheet stays locked; a crashed worker’s sheet is retried after it. Keep above SHEETS_TIMEOUT_MS plus transfer time'),
  SHEETS_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(3).describe('Attempts per upload before a sheet that keeps crashing its worker is marked failed'),
  SHEETS_MAX_UPLOAD_MB: z.coerce.number().int().min(1).max(1024).default(50).describe('Largest upload the worker ingests, in MB; larger ones fail'),
  SHEETS_MAX_ROWS: z.coerce.number().int().min(1).max(100_000_000).default(1_000_000).describe('Most rows a sheet may hold once decompressed; more fail the upload'),
  SHEETS_MAX_DATA_MB: z.coerce.number().int().min(1).max(65_536).default(512).describe('Most data (every value as text) a sheet may hold once decompressed, in MB'),
  SHEETS_DUCKDB_MEMORY_LIMIT: z.string().default('512MB').describe("DuckDB memory limit per ingestion, e.g. '512MB'"),
  SHEETS_DUCKDB_THREADS: z.coerce.number().int().min(1).max(64).default(2).describe('DuckDB threads per ingestion'),
  SHEETS_DUCKDB_MAX_TEMP_SIZE: z.string().default('2GB').describe("DuckDB spill-to-disk limit per ingestion, e.g. '2GB'"),
  SHEETS_TIMEOUT_MS: z.coerce.number().int().min(1000).max(3_600_000).default(120_000).describe('Time limit of one ingestion in DuckDB; a slower file fails'),
}).refine((c) => c.SHEETS_LEASE_SECONDS * 1000 > c.SHEETS_TIMEOUT_MS, {
  // A lease shorter than the work would hand a healthy job to a second worker mid-ingest.
  path: ['SHEETS_LEASE_SECONDS'],
  message: 'must be longer than SHEETS_TIMEOUT_MS',
});

export type SheetsWorkerConfig = z.infer<typeof sheetsWorkerConfigSchema>;

export function loadSheetsWorkerConfig(env: Record<string, string | undefined>): SheetsWorkerConfig {
  return parseConfig(sheetsWorkerConfigSchema, env);
}

export function workerSettings(config: SheetsWorkerConfig): SheetsWorkerSettings {
  return {
    pollMs: config.SHEETS_POLL_MS,
    leaseSeconds: config.SHEETS_LEASE_SECONDS,
    maxAttempts: config.SHEETS_MAX_ATTEMPTS,
    limits: {
      maxBytes: config.SHEETS_MAX_UPLOAD_MB * 1024 * 1024,
      maxRows: config.SHEETS_MAX_ROWS,
      maxDataBytes: config.SHEETS_MAX_DATA_MB * 1024 * 1024,
      memoryLimit: config.SHEETS_DUCKDB_MEMORY_LIMIT,
      threads: config.SHEETS_DUCKDB_THREADS,
      maxTempSize: config.SHEETS_DUCKDB_MAX_TEMP_SIZE,
      timeoutMs: config.SHEETS_TIMEOUT_MS,
    },
  };
}

/**
 * The worker inside the embedded API process (no DATABASE_URL: PGlite). It reads no environment
 * of its own: the defaults above, with the API's upload cap so both sides agree.
 */
export function embeddedWorkerSettings(maxUploadMb: number): SheetsWorkerSettings {
  return workerSettings(loadSheetsWorkerConfig({ DATABASE_URL: 'embedded', SHEETS_MAX_UPLOAD_MB: String(maxUploadMb) }));
}
