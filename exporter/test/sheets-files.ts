/** Test files written into a temporary folder, and a plain DuckDB to make and read Parquet. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

export interface TempFolder {
  readonly dir: string;
  write(name: string, content: string | Uint8Array): Promise<string>;
  remove(): Promise<void>;
}

export async function tempFolder(): Promise<TempFolder> {
  const dir = await mkdtemp(join(tmpdir(), 'uda-sheets-test-'));
  return {
    dir,
    async write(name, content) {
      const path = join(dir, name);
      await writeFile(path, content);
      return path;
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Runs SQL in an unrestricted DuckDB: for making fixtures and reading results, never for ingestion. */
export async function duckdbRows(sql: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    return (await connection.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

export const SALES_CSV = 'Order ID,Amount (€),Order Date,Customer Name\n1,10.50,2024-01-02,Ada\n2,7.25,2024-02-03,"Grace, H."\n';
