/**
 * A throwaway in-memory DuckDB for one ingestion (DECISIONS §6 applied to a write):
 * `allowed_paths` lists exactly the upload and the Parquet output, then external access is turned
 * off and the configuration locked, so the SQL can reach no other file, load no extension and
 * lift no limit. Unlike `allowed_directories`, `allowed_paths` grants single files, not whole
 * folders the engine could also write into.
 */
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
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

export function sqlString(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

export async function openSandbox(files: SandboxFiles, limits: SandboxLimits): Promise<Sandbox> {
  const instance = await DuckDBInstance.create(':memory:', {
    memory_limit: limits.memoryLimit,
    threads: String(limits.threads),
    temp_directory: files.tempDir,
    max_temp_directory_size: limits.maxTempSize,
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
  });
  const connection = await instance.connect();
  try {
    await connection.run(`SET allowed_paths = [${sqlString(files.inputPath)}, ${sqlString(files.outputPath)}]`);
    await connection.run('SET enable_external_access = false');
    await connection.run('SET lock_configuration = true');
  } catch (error) {
    connection.closeSync();
    instance.closeSync();
    throw error;
  }
  return {
    query: (sql) => withDeadline(connection, limits.timeoutMs, sql),
    close() {
      connection.closeSync();
      instance.closeSync();
    },
  };
}

async function withDeadline(connection: DuckDBConnection, timeoutMs: number, sql: string): Promise<Record<string, unknown>[]> {
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    connection.interrupt();
  }, timeoutMs);
  try {
    const reader = await connection.runAndReadAll(sql);
    return reader.getRowObjectsJson() as Record<string, unknown>[];
  } catch (error) {
    if (timedOut) throw new SheetIngestError(`The file took longer than ${Math.ceil(timeoutMs / 1000)} s to process.`);
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
