/**
 * The lookup pages' rows, rendered once per data version into a page file (`pages-{source}.jsonl`),
 * one JSON text per row at an offset kept per document. Reading a page in DuckDB cost ~3.4 ms of
 * CPU per lookup at scale 1 (the joins scan the docs and source tables' row groups for ten keys);
 * reading ten rows at known offsets costs microseconds.
 *
 * The rows are what the page SQL (`page-sql.ts`) selects for every document, converted by the same
 * `jsonValue` as any query result, so a page's shape is the SQL's. The exporter renders the files
 * for the runners; a runner given an older export renders them itself, through this same code.
 * Each row is followed by a newline (not part of its length), so the file is JSON Lines.
 */
import { open } from 'node:fs/promises';
import type { DuckDBConnection, DuckDBDataChunk } from '@duckdb/node-api';
import { jsonValue } from '@uda/shared/duckdb';
import { searchTable } from './table-names.ts';
import { PAGE_DOC, pageSql, type StoredLookupSource } from './page-sql.ts';

/** Where each document's rows are in its page file: 12 bytes per document in memory. */
export interface PageOffsets {
  /** Per document: where its row starts in the file (−1: no row) and its length in bytes. */
  readonly starts: Float64Array;
  readonly lengths: Uint32Array;
  /** The further rows of the few documents with several (a census name in two tables). */
  readonly more: Map<number, [start: number, length: number][]>;
}

export function pagesFileName(source: StoredLookupSource): string {
  return `pages-${source}.jsonl`;
}

/** Rows are written in batches of about this many bytes. */
const WRITE_BATCH = 4 << 20;
const NEWLINE = Buffer.from('\n');

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

/** Renders every document's page rows of `source` into the file at `path` (replaced) and returns their offsets. */
export async function renderPages(connection: DuckDBConnection, source: StoredLookupSource, documents: number, path: string): Promise<PageOffsets> {
  const file = await open(path, 'w');
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
        offset += bytes.length + NEWLINE.length;
        batch.push(bytes, NEWLINE);
        batchBytes += bytes.length + NEWLINE.length;
      }
      if (batchBytes >= WRITE_BATCH) await flush();
    }
    await flush();
    return { starts, lengths, more };
  } finally {
    await file.close();
  }
}
