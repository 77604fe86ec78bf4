/**
 * A throwaway in-memory DuckDB for one ingestion (DECISIONS §6 applied to a write), locked down by
 * the one lock-down in `@uda/shared/duckdb`: `allowed_paths` lists exactly the upload and the
 * Parquet output, so the SQL can reach no other file, load no extension and lift no limit.
 */
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { DeadlineExceeded, lockDown, lockedInstanceOptions, withDeadline } from '@uda/shared/duckdb';
import { SheetIngestError } from './errors.ts';

export interface SandboxLimits {
  readonly memoryLimit: string;
  readonly threads: number;
  readonly maxTempSize: string;
  readonly timeoutMs: number;
}

export interface SandboxFiles {
  readonly inputPath: string;
  readonly outputPath: string;
  /** A folder of the job's own, for spilling; DuckDB manages it itself. */
  readonly tempDir: string;
}

export interface Sandbox {
  /** Runs one statement under the time limit and returns its rows as JSON-safe objects. */
  query(sql: string): Promise<Record<string, unknown>[]>;
  close(): void;
}

export async function openSandbox(files: SandboxFiles, limits: SandboxLimits): Promise<Sandbox> {
  const instance = await DuckDBInstance.create(':memory:', await lockedInstanceOptions(limits, { tempDirectory: files.tempDir }));
  const connection = await instance.connect();
  try {
    await lockDown(connection, [files.inputPath, files.outputPath]);
  } catch (error) {
    connection.closeSync();
    instance.closeSync();
    throw error;
  }
  return {
    query: (sql) => queryUnderDeadline(connection, limits.timeoutMs, sql),
    close() {
      connection.closeSync();
      instance.closeSync();
    },
  };
}

async function queryUnderDeadline(connection: DuckDBConnection, timeoutMs: number, sql: string): Promise<Record<string, unknown>[]> {
  try {
    return await withDeadline(connection, timeoutMs, async () => {
      const reader = await connection.runAndReadAll(sql);
      return reader.getRowObjectsJson() as Record<string, unknown>[];
    });
  } catch (error) {
    if (error instanceof DeadlineExceeded) {
      throw new SheetIngestError(`The file took longer than ${Math.ceil(timeoutMs / 1000)} s to process.`);
    }
    throw error;
  }
}
