/**
 * Builds `service.db`: an input DuckDB reads itself (`read_csv`, `read_json`) goes straight into its table; other
 * tables' rows are staged as NDJSON and loaded by DuckDB with the declared column types. Either way
 * typing, casting and key checks happen in the engine, in bulk.
 */
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { runSql, type SqlSource } from '../ingest/sql-source.ts';
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

/** The table without its key: rows go in first, the key is built over them in one pass (`createKeys`). */
export function createTableSql(table: TableSpec): string {
  const columns = Object.entries(table.columns).map(([name, type]) => `${quoteIdent(name)} ${type}`);
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
  /** Another connection to the same database: its queries run alongside the first's (the export overlaps files and loads). */
  connect(): Promise<DuckDBConnection>;
  /** Checkpoints and closes, so that the file on disk is complete and has no WAL beside it. */
  close(): Promise<void>;
}

export async function openBuildDatabase(path: string, limits: DuckDbLimits): Promise<BuildDatabase> {
  const instance = await DuckDBInstance.create(path, {
    memory_limit: limits.memoryLimit,
    threads: String(limits.threads),
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    // Memory DuckDB frees goes back to the system while the build runs, rather than staying in the
    // process until the allocator's next flush: without it a stage starts above the limit with the
    // previous stage's freed pages (pwc_papers peaked at 702 MB of RSS after food, 494 MB with it).
    allocator_background_threads: 'true',
  });
  const connection = await instance.connect();
  // Progress is tracked (for `connection.progress`), never printed by DuckDB itself.
  await connection.run('SET enable_progress_bar = true; SET enable_progress_bar_print = false; SET progress_bar_time = 0');
  return {
    connection,
    connect: () => instance.connect(),
    async close() {
      await connection.run('CHECKPOINT');
      connection.closeSync();
      instance.closeSync();
    },
  };
}

/** Loads one table and returns its row count. */
export async function loadTable(connection: DuckDBConnection, table: TableSpec, workDir: string): Promise<number> {
  return table.sql ? loadSqlTable(connection, table, table.sql) : loadStagedTable(connection, table, workDir);
}

/** An input DuckDB reads itself, straight into the table: no rows in JavaScript. */
async function loadSqlTable(connection: DuckDBConnection, table: TableSpec, source: SqlSource): Promise<number> {
  const names = Object.keys(table.columns).map(quoteIdent).join(', ');
  const select = await source.select();
  const load = async () => {
    await connection.run(createTableSql(table));
    await connection.run(`INSERT INTO ${quoteIdent(table.name)} (${names}) ${select}`);
  };
  // An error that is not the input's names the table.
  await runSql(connection, source, load, (error) => new TableLoadError(table.name, error));
  return keyed(connection, table);
}

/**
 * Row bound for ART indexes (the primary key's and the lookups'). DuckDB builds an ART in memory
 * beyond its memory limit, about 35 bytes a row for an integer key: the key of the 26 M food
 * nutrient rows took the process from 0.9 to 1.75 GB of RSS under a 1 GB limit. A larger table gets
 * none: its key is checked by an aggregate, which spills within the limit, and a point query on it
 * skips row groups by their min/max (zonemaps), selective where the dump comes sorted by the key
 * (food nutrients by id and food). The tables the lookups read by key (foods, papers, books,
 * companies) stay within it at scale 1.
 */
export const ART_MAX_ROWS = 2_500_000;

/** Checks the loaded table's key and builds its indexes; returns its row count. */
async function keyed(connection: DuckDBConnection, table: TableSpec): Promise<number> {
  try {
    if (table.keepFirst) await dropRepeatedKeys(connection, table);
  } catch (error) {
    throw new TableLoadError(table.name, error);
  }
  const rows = await countRows(connection, table);
  try {
    if (rows > ART_MAX_ROWS) await checkKey(connection, table);
    else await createKeys(connection, table);
  } catch (error) {
    throw new TableLoadError(table.name, error);
  }
  return rows;
}

/**
 * Deletes every row whose key an earlier row (by rowid: the order the INSERT kept) already has. Only
 * the repeated keys are gathered, by an aggregate that spills within DuckDB's memory limit.
 */
async function dropRepeatedKeys(connection: DuckDBConnection, table: TableSpec): Promise<void> {
  const key = table.primaryKey!.map(quoteIdent);
  const name = quoteIdent(table.name);
  await connection.run(
    `DELETE FROM ${name} USING (SELECT ${key.join(', ')}, min(rowid) AS first FROM ${name} GROUP BY ALL HAVING count(*) > 1) repeated
     WHERE ${key.map((k) => `${name}.${k} = repeated.${k}`).join(' AND ')} AND ${name}.rowid <> repeated.first`,
  );
}

/** The key's uniqueness without an index: fails naming the first repeated key. */
async function checkKey(connection: DuckDBConnection, table: TableSpec): Promise<void> {
  if (!table.primaryKey) return;
  const repeated = await duplicateKey(connection, table);
  if (repeated) throw repeated;
}

/**
 * The primary key and the lookups' indexes, built once over the loaded rows: maintaining the key
 * row by row during a bulk insert is several times slower than building it in one pass.
 */
async function createKeys(connection: DuckDBConnection, table: TableSpec): Promise<void> {
  const name = quoteIdent(table.name);
  if (table.primaryKey) {
    const key = table.primaryKey.map(quoteIdent).join(', ');
    await connection.run(`ALTER TABLE ${name} ADD PRIMARY KEY (${key})`).catch(async (error: unknown) => {
      throw (await duplicateKey(connection, table)) ?? error;
    });
  }
  for (const columns of table.indexes ?? []) {
    const indexName = quoteIdent(`${table.name}_${columns.join('_')}_idx`);
    await connection.run(`CREATE INDEX ${indexName} ON ${name} (${columns.map(quoteIdent).join(', ')})`);
  }
}

/** DuckDB says only that the data "contains duplicates"; the error names the first repeated key. */
async function duplicateKey(connection: DuckDBConnection, table: TableSpec): Promise<Error | undefined> {
  const key = table.primaryKey!.map(quoteIdent).join(', ');
  const reader = await connection.runAndReadAll(`SELECT ${key} FROM ${quoteIdent(table.name)} GROUP BY ALL HAVING count(*) > 1 LIMIT 1`);
  const row = reader.getRowObjectsJson()[0];
  if (!row) return undefined;
  const values = Object.entries(row).map(([column, value]) => `${column} = ${JSON.stringify(value)}`).join(', ');
  return new Error(`duplicate primary key ${values}`);
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
  } catch (error) {
    // An input error already names its file and line; engine errors get the table's name.
    throw error instanceof InputError ? error : new TableLoadError(table.name, error);
  } finally {
    await rm(stage, { force: true });
  }
  return keyed(connection, table);
}

export class TableLoadError extends Error {
  override readonly name = 'TableLoadError';
  constructor(table: string, cause: unknown) {
    super(`table ${table}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}
