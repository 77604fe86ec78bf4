/**
 * Export files from the built database: per table one Parquet (zstd) and one CSV, plus the bulk
 * zips. Every file gets its sha256 for the manifest.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yazl from 'yazl';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { ExportFile } from '@uda/shared/manifest';
import { quoteIdent, quoteLiteral } from './database.ts';

/** A built file before upload: everything the manifest needs except its key and ETag. */
export type BuiltFile = Omit<ExportFile, 'key' | 'etag'> & { readonly path: string };

export const CONTENT_TYPES = {
  duckdb: 'application/octet-stream',
  parquet: 'application/vnd.apache.parquet',
  csv: 'text/csv; charset=utf-8',
  zip: 'application/zip',
} as const;

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

async function describe(path: string, file: Omit<BuiltFile, 'size' | 'sha256' | 'path'>): Promise<BuiltFile> {
  const [{ size }, sha256] = await Promise.all([stat(path), sha256File(path)]);
  return { ...file, path, size, sha256 };
}

/**
 * Writes the table's Parquet and CSV files. Their hashes are computed in the background (`hashed`),
 * overlapping the next table's load, which runs on DuckDB's threads.
 */
export async function writeTableFiles(
  connection: DuckDBConnection,
  table: string,
  source: string,
  outDir: string,
): Promise<{ hashed: Promise<BuiltFile[]> }> {
  const parquet = join(outDir, `${table}.parquet`);
  const csv = join(outDir, `${table}.csv`);
  await connection.run(`COPY ${quoteIdent(table)} TO ${quoteLiteral(parquet)} (FORMAT parquet, COMPRESSION zstd)`);
  await connection.run(`COPY ${quoteIdent(table)} TO ${quoteLiteral(csv)} (FORMAT csv, HEADER true)`);
  const hashed = Promise.all([
    describe(parquet, { name: `tables/${table}.parquet`, kind: 'table', format: 'parquet', source, table, content_type: CONTENT_TYPES.parquet }),
    describe(csv, { name: `tables/${table}.csv`, kind: 'table', format: 'csv', source, table, content_type: CONTENT_TYPES.csv }),
  ]);
  // Awaited by the caller after the last table; a failure meanwhile must not be an unhandled rejection.
  hashed.catch(() => {});
  return { hashed };
}

/**
 * zlib level of the CSV entries: level 1 deflates CSV about six times faster than the default 6 for
 * output about a tenth larger (`npm run bench:zip-level -- <table>.csv`), and the CSV zip was the
 * longest step after the tables.
 */
export const CSV_ZIP_LEVEL = 1;

/** A stream stage that hashes and counts the bytes going through it, so a written file needs no second read. */
function hashing(): Transform & { digest(): { size: number; sha256: string } } {
  const hash = createHash('sha256');
  let size = 0;
  const stage = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  return Object.assign(stage, { digest: () => ({ size, sha256: hash.digest('hex') }) });
}

/** Parquet is already compressed, so it is stored; CSV is deflated. One entry per table. Hashed as it is written. */
export async function writeZip(path: string, name: string, entries: readonly BuiltFile[]): Promise<BuiltFile> {
  const zip = new yazl.ZipFile();
  for (const entry of entries) {
    const compress = entry.format !== 'parquet';
    zip.addFile(entry.path, entry.name.replace(/^tables\//, ''), compress ? { compress, compressionLevel: CSV_ZIP_LEVEL } : { compress });
  }
  zip.end();
  const hashed = hashing();
  await pipeline(zip.outputStream, hashed, createWriteStream(path));
  return { name, kind: 'bulk', format: 'zip', content_type: CONTENT_TYPES.zip, path, ...hashed.digest() };
}

export async function describeDatabase(path: string): Promise<BuiltFile> {
  return describe(path, { name: 'service.db', kind: 'database', format: 'duckdb', content_type: CONTENT_TYPES.duckdb });
}
