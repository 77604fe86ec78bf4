/**
 * Writes plain rows we built (never user text) as one Parquet file, through a throwaway in-memory
 * DuckDB instance (the API's usage log, `api/src/billing/usage-log.ts`). One instance per file: a
 * file holds many seconds of records, so its start-up is paid rarely, and nothing stays in memory.
 * Snappy, the format's common default, so any Parquet reader (hyparquet without plug-ins) reads it.
 */
import { randomUUID } from 'node:crypto';
import { DuckDBInstance } from '@duckdb/node-api';
import { quoteIdent, quoteLiteral } from './lockdown.ts';

export type ParquetColumnType = 'VARCHAR' | 'BIGINT' | 'INTEGER' | 'BOOLEAN' | 'TIMESTAMP_MS';

export interface ParquetColumn {
  readonly name: string;
  readonly type: ParquetColumnType;
}

type Cell = string | number | boolean | null;

export async function writeParquetRows(path: string, columns: readonly ParquetColumn[], rows: readonly (readonly Cell[])[]): Promise<void> {
  const instance = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false', autoload_known_extensions: 'false', threads: '1' });
  const connection = await instance.connect();
  try {
    const table = `rows_${randomUUID().replaceAll('-', '')}`;
    await connection.run(`CREATE TABLE ${quoteIdent(table)} (${columns.map((c) => `${quoteIdent(c.name)} ${c.type === 'TIMESTAMP_MS' ? 'BIGINT' : c.type}`).join(', ')})`);
    const appender = await connection.createAppender(table);
    for (const row of rows) {
      row.forEach((cell, i) => append(appender, columns[i]!.type, cell));
      appender.endRow();
    }
    appender.closeSync();
    const select = columns.map((c) => (c.type === 'TIMESTAMP_MS' ? `epoch_ms(${quoteIdent(c.name)}) AS ${quoteIdent(c.name)}` : quoteIdent(c.name))).join(', ');
    await connection.run(`COPY (SELECT ${select} FROM ${quoteIdent(table)}) TO ${quoteLiteral(path)} (FORMAT parquet, COMPRESSION snappy)`);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

function append(appender: Awaited<ReturnType<Awaited<ReturnType<DuckDBInstance['connect']>>['createAppender']>>, type: ParquetColumnType, cell: Cell): void {
  if (cell === null) return appender.appendNull();
  if (type === 'VARCHAR') return appender.appendVarchar(String(cell));
  if (type === 'BOOLEAN') return appender.appendBoolean(Boolean(cell));
  if (type === 'INTEGER') return appender.appendInteger(Number(cell));
  return appender.appendBigInt(BigInt(cell as number));
}
