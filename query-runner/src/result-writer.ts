/**
 * Turns a finished result into files. This DuckDB instance is separate from the sandbox and never
 * sees user text: it only runs statements we build, with identifiers and paths quoted. It exists
 * because the sandbox cannot write files by design.
 */
import { randomUUID } from 'node:crypto';
import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDBDataChunk } from '@duckdb/node-api';
import { jsonValue, quoteIdent, quoteLiteral } from '@uda/shared/duckdb';

export interface ResultWriter {
  /** Writes the first `maxRows` rows of `chunks` as one Parquet file. */
  writeParquet(columns: readonly { name: string; type: string }[], chunks: readonly DuckDBDataChunk[], maxRows: number, path: string): Promise<void>;
  parquetToCsv(parquetPath: string, csvPath: string): Promise<void>;
  parquetToRows(parquetPath: string): Promise<Record<string, unknown>[]>;
  close(): void;
}

export async function createResultWriter(): Promise<ResultWriter> {
  const instance = await DuckDBInstance.create(':memory:', {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    threads: '1',
  });
  const withConnection = async <T>(work: (c: Awaited<ReturnType<DuckDBInstance['connect']>>) => Promise<T>) => {
    const connection = await instance.connect();
    try {
      return await work(connection);
    } finally {
      connection.closeSync();
    }
  };
  return {
    writeParquet: (columns, chunks, maxRows, path) =>
      withConnection(async (c) => {
        const table = quoteIdent(`result_${randomUUID().replaceAll('-', '')}`);
        const defs = columns.map((col) => `${quoteIdent(col.name)} ${col.type}`).join(', ');
        await c.run(`CREATE TEMP TABLE ${table} (${defs})`);
        const appender = await c.createAppender(table.slice(1, -1), 'main', 'temp');
        for (const chunk of chunks) appender.appendDataChunk(chunk);
        appender.closeSync();
        // Insertion order is kept, so LIMIT drops exactly the probe row. One call for both
        // statements: each call is a round trip to DuckDB's thread, and point lookups feel it.
        // The temp table dies with the connection even if the COPY fails.
        await c.run(`COPY (FROM ${table} LIMIT ${maxRows}) TO ${quoteLiteral(path)} (FORMAT parquet, COMPRESSION zstd); DROP TABLE ${table}`);
      }),
    parquetToCsv: (parquetPath, csvPath) =>
      withConnection(async (c) => {
        await c.run(`COPY (FROM read_parquet(${quoteLiteral(parquetPath)})) TO ${quoteLiteral(csvPath)} (FORMAT csv, HEADER true)`);
      }),
    parquetToRows: (parquetPath) =>
      withConnection(async (c) => {
        const reader = await c.runAndReadAll(`FROM read_parquet(${quoteLiteral(parquetPath)})`);
        const names = reader.deduplicatedColumnNames();
        return reader.convertRows(jsonValue).map((values) => Object.fromEntries(names.map((n, i) => [n, values[i]])));
      }),
    close: () => instance.closeSync(),
  };
}
