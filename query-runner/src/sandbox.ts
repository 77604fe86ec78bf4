/**
 * The DuckDB sandbox (DECISIONS §6): the database is opened READ_ONLY with extension autoload and
 * autoinstall off, then `enable_external_access=false`, then `lock_configuration=true`, with memory,
 * thread and temp limits from config. `allowed_directories` is not used: it also allows writes.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDBConnection } from '@duckdb/node-api';

export interface SandboxLimits {
  readonly memoryLimit: string;
  readonly threads: number;
  readonly maxTempSize: string;
  /** Private spill folder; DuckDB lets the engine use it even with external access off. */
  readonly tempDirectory: string;
}

/** A local Parquet copy of a connected sheet and the table name it gets. */
export interface SheetFile {
  readonly name: string;
  readonly path: string;
}

function instanceOptions(limits: SandboxLimits, accessMode: 'READ_ONLY' | 'AUTOMATIC'): Record<string, string> {
  return {
    access_mode: accessMode,
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    memory_limit: limits.memoryLimit,
    threads: String(limits.threads),
    max_temp_directory_size: limits.maxTempSize,
    // One spill folder per instance: during a swap two instances are open, and their temp files
    // must not collide.
    temp_directory: join(limits.tempDirectory, randomUUID()),
  };
}

async function lockDown(connection: DuckDBConnection): Promise<void> {
  // Order matters: once locked, not even we can change a setting.
  await connection.run('SET enable_external_access = false');
  await connection.run('SET lock_configuration = true');
}

/** The shared instance for one database version; every query takes its own connection. */
export async function openSandbox(dbPath: string, limits: SandboxLimits): Promise<DuckDBInstance> {
  const instance = await DuckDBInstance.create(dbPath, instanceOptions(limits, 'READ_ONLY'));
  const setup = await instance.connect();
  try {
    await lockDown(setup);
  } finally {
    setup.closeSync();
  }
  return instance;
}

/**
 * A one-query instance that also holds connected sheets. A view over `read_parquet` would stop
 * working once external access is off (DuckDB checks access when the view is read), so each sheet
 * is copied into the instance's in-memory catalog before the lock-down. The database itself is an
 * attached READ_ONLY `service`, made current, so unqualified writes still fail.
 */
export async function openSheetSandbox(
  dbPath: string,
  limits: SandboxLimits,
  sheets: readonly SheetFile[],
): Promise<{ instance: DuckDBInstance; connection: DuckDBConnection }> {
  const instance = await DuckDBInstance.create(':memory:', instanceOptions(limits, 'AUTOMATIC'));
  const connection = await instance.connect();
  try {
    await connection.run(`ATTACH ${quoteLiteral(dbPath)} AS service (READ_ONLY)`);
    for (const sheet of sheets) {
      await connection.run(
        `CREATE TABLE memory.main.${quoteIdent(sheet.name)} AS FROM read_parquet(${quoteLiteral(sheet.path)})`,
      );
    }
    await connection.run('USE service');
    await connection.run("SET search_path = 'service.main,memory.main'");
    await lockDown(connection);
    return { instance, connection };
  } catch (error) {
    connection.closeSync();
    instance.closeSync();
    throw error;
  }
}

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

export function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
