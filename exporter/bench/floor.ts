/**
 * The FLOOR of an export: what DuckDB alone takes to read every table's input and write the table's
 * Parquet file (zstd, as the export writes it), with no database file, key, search index, CSV, zip,
 * hash or upload. An input DuckDB reads itself is COPYed straight from the exporter's own SELECT
 * (its row rules are part of that read and cost little beside it); a table whose rows come from
 * JavaScript (SEC, the live sources) is staged as NDJSON by its reader and COPYed from there, as
 * reading its input takes no less.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { Logger } from '@uda/shared/logger';
import { quoteIdent, quoteLiteral, type DuckDbLimits } from '../src/build/database.ts';
import { sampleRss } from '../src/build/peak-rss.ts';
import type { TableSpec } from '../src/ingest/table-spec.ts';
import { allTableSpecs } from '../src/sources.ts';

/** Writes every table's Parquet file from its input, logging each as a `table built` line; returns the rows. */
export async function runFloor(inputDir: string, workDir: string, limits: DuckDbLimits, log: Logger): Promise<number> {
  await mkdir(workDir, { recursive: true });
  const instance = await DuckDBInstance.create(':memory:', {
    memory_limit: limits.memoryLimit,
    threads: String(limits.threads),
    temp_directory: join(workDir, 'spill'),
  });
  const connection = await instance.connect();
  let total = 0;
  try {
    for (const table of await allTableSpecs(inputDir)) {
      const started = performance.now();
      const rss = sampleRss();
      const rows = await copyToParquet(connection, table, workDir);
      const loadSeconds = Number(((performance.now() - started) / 1000).toFixed(2));
      log.info({ table: table.name, rows, loadSeconds, rowsPerSecond: Math.round(rows / Math.max(loadSeconds, 0.01)), peakRssMb: rss.stop() }, 'table built');
      total += rows;
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
  return total;
}

async function copyToParquet(connection: DuckDBConnection, table: TableSpec, workDir: string): Promise<number> {
  const out = quoteLiteral(join(workDir, `${table.name}.parquet`));
  const stage = join(workDir, `${table.name}.ndjson`);
  try {
    const select = table.sql ? await table.sql.select() : await staged(table, stage);
    const reader = await connection.runAndReadAll(`COPY (${select}) TO ${out} (FORMAT parquet, COMPRESSION zstd)`);
    return Number(reader.getRows()[0]?.[0] ?? 0);
  } finally {
    await rm(stage, { force: true });
  }
}

/** The table's rows as NDJSON, and the SELECT that reads them back with the declared types. */
async function staged(table: TableSpec, path: string): Promise<string> {
  async function* lines() {
    for await (const row of table.rows()) yield `${JSON.stringify(row)}\n`;
  }
  await pipeline(Readable.from(lines()), createWriteStream(path));
  const types = Object.entries(table.columns).map(([name, type]) => `${quoteIdent(name)}: ${quoteLiteral(type)}`);
  return `SELECT * FROM read_json(${quoteLiteral(path)}, format = 'newline_delimited', columns = {${types.join(', ')}}, maximum_object_size = 16777216)`;
}
