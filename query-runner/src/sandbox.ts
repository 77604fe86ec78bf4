/**
 * The DuckDB sandbox (DECISIONS §6): the database is opened READ_ONLY and locked down by the one
 * lock-down in `@uda/shared/duckdb`, with memory, thread and temp limits from config.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDBConnection } from '@duckdb/node-api';
import { lockDown, lockedInstanceOptions, quoteIdent, quoteLiteral, withDeadline } from '@uda/shared/duckdb';

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

/** One spill folder per instance: during a swap two instances are open, and their temp files must not collide. */
const optionsFor = (limits: SandboxLimits, accessMode: 'READ_ONLY' | 'AUTOMATIC') =>
  lockedInstanceOptions(limits, { accessMode, tempDirectory: join(limits.tempDirectory, randomUUID()) });

/** The shared instance for one database version; every query takes its own connection. */
export async function openSandbox(dbPath: string, limits: SandboxLimits): Promise<DuckDBInstance> {
  const instance = await DuckDBInstance.create(dbPath, await optionsFor(limits, 'READ_ONLY'));
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
  const instance = await DuckDBInstance.create(':memory:', await optionsFor(limits, 'AUTOMATIC'));
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

/**
 * An instance holding one connected sheet and nothing else (no database attached), kept open across
 * searches of that sheet version: `prepare` builds what the searches share (copies, columns) before
 * the lock-down, as external access is off after it. The copy and `prepare` run under `timeoutMs`.
 */
export async function openSheetCopy<T>(
  limits: SandboxLimits,
  sheet: SheetFile,
  timeoutMs: number,
  prepare: (connection: DuckDBConnection) => Promise<T>,
): Promise<{ instance: DuckDBInstance; prepared: T }> {
  const instance = await DuckDBInstance.create(':memory:', await optionsFor(limits, 'AUTOMATIC'));
  try {
    const connection = await instance.connect();
    try {
      const prepared = await withDeadline(connection, timeoutMs, async () => {
        await connection.run(`CREATE TABLE memory.main.${quoteIdent(sheet.name)} AS FROM read_parquet(${quoteLiteral(sheet.path)})`);
        return prepare(connection);
      });
      await lockDown(connection);
      return { instance, prepared };
    } finally {
      connection.closeSync();
    }
  } catch (error) {
    instance.closeSync();
    throw error;
  }
}
