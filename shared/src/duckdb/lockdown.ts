/**
 * The one DuckDB lock-down (DECISIONS §6), used by every instance that may see text we did not
 * write: the runner's sandbox, the sheet ingestion sandbox and the SQL validator's parser.
 *
 * Extension autoload and autoinstall are off from the start; `allowed_paths` (single files, never
 * folders the engine could also write into) is set before external access is turned off; the
 * configuration is locked last, so after `lockDown` not even our own code can change a setting.
 */
import { mkdir } from 'node:fs/promises';
import type { DuckDBConnection } from '@duckdb/node-api';

export interface EngineLimits {
  readonly memoryLimit: string;
  readonly threads: number;
  /** `max_temp_directory_size`: how much the engine may spill. */
  readonly maxTempSize: string;
}

/**
 * Options for `DuckDBInstance.create`. With `tempDirectory` the engine may spill there (the folder
 * is created first: DuckDB does not create it and would refuse the query with the path).
 */
export async function lockedInstanceOptions(
  limits: EngineLimits,
  extra: { accessMode?: 'READ_ONLY' | 'AUTOMATIC'; tempDirectory?: string } = {},
): Promise<Record<string, string>> {
  if (extra.tempDirectory) await mkdir(extra.tempDirectory, { recursive: true });
  return {
    ...(extra.accessMode ? { access_mode: extra.accessMode } : {}),
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    memory_limit: limits.memoryLimit,
    threads: String(limits.threads),
    max_temp_directory_size: limits.maxTempSize,
    ...(extra.tempDirectory ? { temp_directory: extra.tempDirectory } : {}),
  };
}

/** Order matters: once locked, not even we can change a setting. */
export async function lockDown(connection: DuckDBConnection, allowedPaths: readonly string[] = []): Promise<void> {
  if (allowedPaths.length > 0) {
    await connection.run(`SET allowed_paths = [${allowedPaths.map(quoteLiteral).join(', ')}]`);
  }
  await connection.run('SET enable_external_access = false');
  await connection.run('SET lock_configuration = true');
}

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

export function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
