/** The exporter's settings, parsed once from the environment. */
import { join } from 'node:path';
import { z } from 'zod';
import { commonEnv, parseConfig } from '@uda/shared/config';
import { DEFAULT_KEEP_VERSIONS } from '@uda/shared/manifest';
import { objectStoreEnv } from '@uda/shared/object-store';

export const exporterConfigSchema = z.object({
  ...commonEnv,
  ...objectStoreEnv,
  EXPORT_INPUT_DIR: z
    .string()
    .default(join(import.meta.dirname, '..', 'data'))
    .describe('Folder with the raw dumps in their official formats (defaults to the bundled sample data)'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional()
    .describe("The API's PostgreSQL, whose live_copies feed the live sources' tables; unset uses snapshot files only"),
  EXPORT_KEEP_VERSIONS: z.coerce.number().int().min(1).max(50).default(DEFAULT_KEEP_VERSIONS).describe('Export versions kept in the object store'),
  // 600 MB kept a scale-1 build (32.6 M rows, `npm run bench:export`) at 1,008 MiB of peak RSS, Node included.
  EXPORT_DUCKDB_MEMORY_LIMIT: z.string().default('600MB').describe("DuckDB memory limit while building, e.g. '600MB'; the process's peak RSS is about 440 MiB above it"),
  EXPORT_PUSHGATEWAY_URL: z
    .url()
    .optional()
    .describe('Prometheus Pushgateway that receives the outcome of each run; unset pushes nothing'),
  EXPORT_DUCKDB_THREADS: z.coerce.number().int().min(1).max(64).default(2).describe('DuckDB threads while building'),
});

export type ExporterConfig = z.infer<typeof exporterConfigSchema>;

export function loadExporterConfig(env: Record<string, string | undefined>): ExporterConfig {
  return parseConfig(exporterConfigSchema, env);
}
