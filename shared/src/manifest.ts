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

export const manifestSchema = z.object({
  version: z.string().regex(VERSION_PATTERN),
  built_at: z.iso.datetime(),
  tables: z.record(z.string(), z.object({ source: z.string(), rows: z.number().int().nonnegative() })),
  files: z.array(exportFileSchema),
});

export type ExportFile = z.infer<typeof exportFileSchema>;
export type Manifest = z.infer<typeof manifestSchema>;

export function newVersion(now: Date, randomHex: string): string {
  const stamp = now.toISOString().replace(/[-:.]/g, '');
  return `${stamp}-${randomHex.slice(0, 6)}`;
}
