/**
 * The export manifest (DECISIONS §7). The exporter writes `exports/<version>/manifest.json` and then
 * replaces `exports/manifest.json`, which is the switch every reader (API, runners) follows.
 */
import { z } from 'zod';

export const MANIFEST_KEY = 'exports/manifest.json';
export const EXPORTS_PREFIX = 'exports/';
/** Export versions kept in the object store unless `EXPORT_KEEP_VERSIONS` says otherwise. */
export const DEFAULT_KEEP_VERSIONS = 3;

export function versionPrefix(version: string): string {
  return `${EXPORTS_PREFIX}${version}/`;
}

export function versionManifestKey(version: string): string {
  return `${versionPrefix(version)}manifest.json`;
}

/** Versions sort as text in build order, to the millisecond: `20261122T163000123Z-1a2b3c`. */
export const VERSION_PATTERN = /^\d{8}T\d{9}Z-[0-9a-f]{6}$/;

export const exportFileSchema = z.object({
  /** Stable name clients ask for: `service.db`, `service.csv.zip`, `tables/food.parquet`, … */
  name: z.string(),
  key: z.string(),
  kind: z.enum(['database', 'bulk', 'table']),
  format: z.enum(['duckdb', 'parquet', 'csv', 'zip']),
  source: z.string().optional(),
  table: z.string().optional(),
  size: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  etag: z.string(),
  content_type: z.string(),
});

/** A runner file's name: `runner/search-index.bin`, `runner/pages-food.jsonl`; a runner saves it under the part after `runner/`. */
export const RUNNER_FILE_NAME = /^runner\/[a-z0-9-]+\.(bin|jsonl)$/;

/**
 * A file only the runners read: the lookups' index and page files the exporter builds from
 * `service.db` (`@uda/search/index`). They are not exports: they are kept out of `files`,
 * which is what the export routes serve, and a reader that does not know them ignores them.
 */
export const runnerFileSchema = z.object({
  name: z.string().regex(RUNNER_FILE_NAME),
  key: z.string(),
  size: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  etag: z.string(),
  content_type: z.string(),
});

export const manifestSchema = z.object({
  version: z.string().regex(VERSION_PATTERN),
  built_at: z.iso.datetime(),
  tables: z.record(z.string(), z.object({ source: z.string(), rows: z.number().int().nonnegative() })),
  files: z.array(exportFileSchema),
  /** Absent from exports built before the runner files existed: a runner then builds them itself. */
  runner_files: z.array(runnerFileSchema).optional(),
});

export type ExportFile = z.infer<typeof exportFileSchema>;
export type RunnerFile = z.infer<typeof runnerFileSchema>;
export type Manifest = z.infer<typeof manifestSchema>;

export function newVersion(now: Date, randomHex: string): string {
  const stamp = now.toISOString().replace(/[-:.]/g, '');
  return `${stamp}-${randomHex.slice(0, 6)}`;
}
