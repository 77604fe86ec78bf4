/**
 * Builds `service.db`: a large CSV is read by DuckDB's own `read_csv` straight into its table; other
 * tables' rows are staged as NDJSON and loaded by DuckDB with the declared column types. Either way
 * typing, casting and key checks happen in the engine, in bulk.
 */
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { readCsvSql, runCsvSql } from '../ingest/csv-sql.ts';
import { InputError, type Row, type TableSpec } from '../ingest/table-spec.ts';

export interface DuckDbLimits {
  readonly memoryLimit: string;
  readonly threads: number;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

export function quoteIdent(name: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`unsafe SQL identifier: ${name}`);
  return `"${name}"`;
}

export function quoteLiteral(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

export function createTableSql(table: TableSpec): string {
  const columns = Object.entries(table.columns).map(([name, type]) => `${quoteIdent(name)} ${type}`);
  if (table.primaryKey) columns.push(`PRIMARY KEY (${table.primaryKey.map(quoteIdent).join(', ')})`);
  return `CREATE TABLE ${quoteIdent(table.name)} (${columns.join(', ')})`;
}

/** Batches lines so that a large table is written in few large chunks. */
async function* ndjsonChunks(rows: AsyncIterable<Row>): AsyncGenerator<string> {
  let chunk = '';
  for await (const row of rows) {
    chunk += `${JSON.stringify(row)}\n`;
    if (chunk.length > 1 << 20) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}

export interface BuildDatabase {
  readonly connection: DuckDBConnection;
  /** Checkpoints and closes, so that the file on disk is complete and has no WAL beside it. */
  close(): Promise<void>;
}

export async function openBuildDatabase(path: string, limits: DuckDbLimits): Promise<BuildDatabase> {
  const instance = await DuckDBInstance.create(path, {
    memory_limit: limits.memoryLimit,
    threads: String(limits.threads),
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
  });
  const connection = await instance.connect();
  return {
    connection,
    async close() {
      await connection.run('CHECKPOINT');
      connection.closeSync();
      instance.closeSync();
    },
  };
}

/** Loads one table and returns its row count. */
export async function loadTable(connection: DuckDBConnection, table: TableSpec, workDir: string): Promise<number> {
  return table.csv ? loadCsvTable(connection, table, table.csv) : loadStagedTable(connection, table, workDir);
}

/** A CSV that DuckDB reads itself, straight into the table: no rows in JavaScript. */
async function loadCsvTable(connection: DuckDBConnection, table: TableSpec, csv: NonNullable<TableSpec['csv']>): Promise<number> {
  const names = Object.keys(table.columns).map(quoteIdent).join(', ');
  const load = async () => {
    await connection.run(createTableSql(table));
    await connection.run(`INSERT INTO ${quoteIdent(table.name)} (${names}) ${readCsvSql(csv.inputDir, csv.source)}`);
    await createIndexes(connection, table);
  };
  // An error that is not the input's (a duplicate key) names the table.
  await runCsvSql(connection, csv.inputDir, csv.source, load, (error) => new TableLoadError(table.name, error));
  return countRows(connection, table);
}

async function createIndexes(connection: DuckDBConnection, table: TableSpec): Promise<void> {
  for (const columns of table.indexes ?? []) {
    const indexName = quoteIdent(`${table.name}_${columns.join('_')}_idx`);
    await connection.run(`CREATE INDEX ${indexName} ON ${quoteIdent(table.name)} (${columns.map(quoteIdent).join(', ')})`);
  }
}

async function countRows(connection: DuckDBConnection, table: TableSpec): Promise<number> {
  const reader = await connection.runAndReadAll(`SELECT count(*)::BIGINT AS n FROM ${quoteIdent(table.name)}`);
  return Number(reader.getRowObjects()[0]?.n ?? 0);
}

/** Rows from JavaScript, staged as NDJSON and typed by DuckDB's JSON reader. */
async function loadStagedTable(connection: DuckDBConnection, table: TableSpec, workDir: string): Promise<number> {
  const stage = join(workDir, `${table.name}.ndjson`);
  try {
    await pipeline(Readable.from(ndjsonChunks(table.rows())), createWriteStream(stage));
    const names = Object.keys(table.columns).map(quoteIdent).join(', ');
    const types = Object.entries(table.columns).map(([name, type]) => `${quoteIdent(name)}: ${quoteLiteral(type)}`);
    await connection.run(createTableSql(table));
    await connection.run(
      `INSERT INTO ${quoteIdent(table.name)} (${names}) SELECT ${names} FROM read_json(${quoteLiteral(stage)}, ` +
        `format = 'newline_delimited', columns = {${types.join(', ')}}, maximum_object_size = 16777216)`,
    );
    await createIndexes(connection, table);
  } catch (error) {
    // An input error already names its file and line; engine errors get the table's name.
    throw error instanceof InputError ? error : new TableLoadError(table.name, error);
  } finally {
    await rm(stage, { force: true });
  }
  return countRows(connection, table);
}

export class TableLoadError extends Error {
  override readonly name = 'TableLoadError';
  constructor(table: string, cause: unknown) {
    super(`table ${table}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}
