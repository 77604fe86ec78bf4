/** Loads one table into a throwaway in-memory DuckDB: how the ingest tests exercise a reader alone. */
import { DuckDBInstance } from '@duckdb/node-api';
import { loadTable } from '../src/build/database.ts';
import type { TableSpec } from '../src/ingest/table-spec.ts';

export async function loadTableAlone(table: TableSpec, workDir: string): Promise<number> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    return await loadTable(connection, table, workDir);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}
