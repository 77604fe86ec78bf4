/**
 * The lookup pages' rows, rendered once per data version into a file beside the version's
 * database, one JSON text per row at an offset the runner keeps per document. Reading a page in
 * DuckDB cost ~3.4 ms of CPU per lookup at scale 1 (`lookup-cpu.bench.ts`, "page ms": the joins scan
 * the docs and source tables' row groups for ten keys, whatever the statement's form), three
 * quarters of a lookup; reading ten rows at known offsets costs microseconds.
 *
 * The rows are what the page SQL (`stored-sql.ts`) selects for every document, converted by the
 * same `jsonValue` as any query result, so a page's shape is the SQL's. The file is written in the
 * version's folder, which is deleted with the version; in memory, 12 bytes per document.
 */
import { readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBConnection, DuckDBDataChunk } from '@duckdb/node-api';
import { searchTable } from '@uda/shared/search';
import { jsonValue } from '../json-values.ts';
import { PAGE_DOC, pageSql, type StoredLookupSource } from './stored-sql.ts';

export interface PageStore {
  readonly file: FileHandle;
  /** Per document: where its row starts in the file (−1: no row) and its length in bytes. */
  readonly starts: Float64Array;
  readonly lengths: Uint32Array;
  /** The further rows of the few documents with several (a census name in two tables). */
  readonly more: Map<number, [start: number, length: number][]>;
}

/** Rows are written in batches of about this many bytes. */
const WRITE_BATCH = 4 << 20;

/** The chunk's rows as objects keyed by column name, converted as query results are. */
function chunkRows(chunk: DuckDBDataChunk, names: readonly string[]): Record<string, unknown>[] {
  const columns = names.map((_, i) => chunk.convertColumnValues(i, jsonValue));
  const rows: Record<string, unknown>[] = [];
  const count = chunk.rowCount; // a native call per read
  for (let r = 0; r < count; r++) {
    const row: Record<string, unknown> = {};
    names.forEach((name, i) => (row[name] = columns[i]![r]));
    rows.push(row);
  }
  return rows;
}

/** Renders every document's page rows of `source` into `dir`. */
export async function buildPageStore(connection: DuckDBConnection, source: StoredLookupSource, documents: number, dir: string): Promise<PageStore> {
  const file = await open(join(dir, `pages-${source}.jsonl`), 'w+');
  const starts = new Float64Array(documents + 1).fill(-1);
  const lengths = new Uint32Array(documents + 1);
  const more = new Map<number, [number, number][]>();
  let offset = 0;
  let batch: Buffer[] = [];
  let batchBytes = 0;
  const flush = async () => {
    await file.write(Buffer.concat(batch, batchBytes));
    batch = [];
    batchBytes = 0;
  };
  try {
    const result = await connection.stream(`WITH ranked AS (SELECT doc FROM ${searchTable(source, 'docs')}) ${pageSql(source)}`);
    const names = result.columnNames();
    for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
      for (const { [PAGE_DOC]: doc, ...row } of chunkRows(chunk, names)) {
        const bytes = Buffer.from(JSON.stringify(row));
        const d = doc as number;
        if (starts[d] === -1) {
          starts[d] = offset;
          lengths[d] = bytes.length;
        } else more.set(d, [...(more.get(d) ?? []), [offset, bytes.length]]);
        offset += bytes.length;
        batch.push(bytes);
        batchBytes += bytes.length;
      }
      if (batchBytes >= WRITE_BATCH) await flush();
    }
    await flush();
    return { file, starts, lengths, more };
  } catch (error) {
    await file.close();
    throw error;
  }
}

/**
 * One row, read synchronously: a read of a few hundred bytes from the page cache costs
 * microseconds, less than a trip through libuv's thread pool and a promise per row.
 */
function readRow(store: PageStore, start: number, length: number): Record<string, unknown> {
  const buffer = Buffer.allocUnsafe(length);
  readSync(store.file.fd, buffer, 0, length, start);
  return JSON.parse(buffer.toString('utf8')) as Record<string, unknown>;
}

/** The rows of `docs`, in their order. */
export function readPage(store: PageStore, docs: readonly number[]): Record<string, unknown>[] {
  return docs.flatMap((doc) => {
    const start = store.starts[doc] ?? -1;
    if (start < 0) return [];
    const further = store.more.get(doc) ?? [];
    return [readRow(store, start, store.lengths[doc]!), ...further.map(([s, l]) => readRow(store, s, l))];
  });
}

export async function closePageStore(store: PageStore): Promise<void> {
  await store.file.close();
}
