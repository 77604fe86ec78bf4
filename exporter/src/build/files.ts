/**
 * Export files from the built database: per table one Parquet (zstd) and one CSV, plus the bulk
 * zips. Every file gets its sha256 for the manifest, each computed from a read the export does anyway.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
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

/** A table file written but not yet hashed: its sha256 comes from the zip's read of it (`BulkZip.add`). */
export type TableFile = Omit<BuiltFile, 'sha256'>;

/** Writes the table's Parquet and CSV files with DuckDB; the caller hashes them as it zips them. */
export async function writeTableFiles(connection: DuckDBConnection, table: string, source: string, outDir: string): Promise<TableFile[]> {
  const parquet = join(outDir, `${table}.parquet`);
  const csv = join(outDir, `${table}.csv`);
  await connection.run(`COPY ${quoteIdent(table)} TO ${quoteLiteral(parquet)} (FORMAT parquet, COMPRESSION zstd)`);
  await connection.run(`COPY ${quoteIdent(table)} TO ${quoteLiteral(csv)} (FORMAT csv, HEADER true)`);
  const [parquetSize, csvSize] = await Promise.all([stat(parquet), stat(csv)]);
  return [
    { name: `tables/${table}.parquet`, kind: 'table', format: 'parquet', source, table, content_type: CONTENT_TYPES.parquet, path: parquet, size: parquetSize.size },
    { name: `tables/${table}.csv`, kind: 'table', format: 'csv', source, table, content_type: CONTENT_TYPES.csv, path: csv, size: csvSize.size },
  ];
}

/**
 * zlib level of the CSV entries: level 1 deflates CSV about six times faster than the default 6 for
 * output about a tenth larger (`npm run bench:zip-level -- <table>.csv`), and the CSV zip was the
 * longest step after the tables.
 */
export const CSV_ZIP_LEVEL = 1;

/** A stream stage that hashes and counts the bytes going through it, so a file needs no second read for its hash. */
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

/** A bulk zip written while the export runs: one entry per table file, appended as each table's files are done. */
export interface BulkZip {
  /** Appends the file; resolves with its sha256, taken from the zip's own read of it. */
  add(file: TableFile): Promise<string>;
  /** No more entries: resolves once the zip is on disk, hashed as it was written. */
  finish(): Promise<BuiltFile>;
  /** The export failed: stops writing (the build folder is removed with the half-written zip). */
  abort(): void;
}

/**
 * Parquet is already compressed, so it is stored; CSV is deflated (on libuv's threads, beside
 * DuckDB's). yazl writes the entries in order, each read once, when its turn comes.
 */
export function openZip(path: string, name: string): BulkZip {
  const zip = new yazl.ZipFile();
  const hashed = hashing();
  const written = pipeline(zip.outputStream, hashed, createWriteStream(path));
  // A failed entry read fails the whole zip; `finish` reports it.
  const fail = (error: Error) => (zip.outputStream as Readable).destroy(error);
  zip.on('error', fail);
  written.catch(() => {});
  return {
    add(file) {
      const compress = file.format !== 'parquet';
      const options = compress ? { compress, compressionLevel: CSV_ZIP_LEVEL, size: file.size } : { compress, size: file.size };
      return new Promise<string>((resolve, reject) => {
        zip.addReadStreamLazy(file.name.replace(/^tables\//, ''), options, (open) => {
          const entry = hashing();
          pipeline(createReadStream(file.path), entry).then(
            () => resolve(entry.digest().sha256),
            (error: Error) => (reject(error), fail(error)),
          );
          open(null, entry);
        });
      });
    },
    async finish() {
      zip.end();
      await written;
      return { name, kind: 'bulk', format: 'zip', content_type: CONTENT_TYPES.zip, path, ...hashed.digest() };
    },
    abort: () => fail(new Error(`${name} abandoned: the export failed`)),
  };
}

export async function describeDatabase(path: string): Promise<BuiltFile> {
  return describe(path, { name: 'service.db', kind: 'database', format: 'duckdb', content_type: CONTENT_TYPES.duckdb });
}
