/**
 * Keyword search over one connected sheet: our own parameterised SQL, not the user's, so it skips
 * the textual SQL validator (the search text is a bound parameter, never SQL). It still runs in a
 * one-query sandbox, under the concurrency limiter and the query deadline (interrupt → QUERY_TIMEOUT).
 *
 * A row matches when a column contains the text (case-insensitive), or when its text columns hold
 * every word of it with the stored lookups' forgiveness (`sheetWordTerms`): the word, a word with
 * its Porter2 stem, or one within its typo budget. Rows containing the text come first, then by
 * how far their words are from the typed ones (exact, stem, one typo, two), then in sheet order.
 *
 * Each sheet version is opened once (`sheet-cache.ts`); its term index (each term's rows) and its
 * lower-cased cells (`sheet_cells`, aligned with the sheet by row id) are built then and kept. A
 * search is the containment scan over those cells, the ranking over the index, and the read of the
 * rows it answers.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { randomUUID } from 'node:crypto';
import { type DuckDBConnection, type DuckDBListValue, INTEGER, LIST, listValue } from '@duckdb/node-api';
import { DeadlineExceeded } from '@uda/shared/duckdb';
import type { ObjectStore } from '@uda/shared/object-store';
import type { SheetSearchRequest, SheetSearchResponse } from '@uda/shared/runner-contract';
import type { DatabaseManager } from '../database-manager.ts';
import { RunnerError, unavailableError } from '../errors.ts';
import { deadlineCheck, runnerErrorOf } from '../deadline.ts';
import { jsonValue, quoteIdent, withDeadline } from '@uda/shared/duckdb';
import type { Limiter } from '../limiter.ts';
import { searchTermsSql } from '@uda/search/vocabulary';
import { queryTerms } from '@uda/search/query';
import { SortedTextsBuilder } from '@uda/search/index';
import { likePattern, rankSheetRows, type SheetTermIndex, sheetWordTerms } from '@uda/search/sheets';
import { openSheetCopy } from '../sandbox.ts';
import type { OpenSheet, SheetCache } from './sheet-cache.ts';
import type { SandboxLimits } from '../sandbox.ts';

export interface SheetSearchDeps {
  readonly store: ObjectStore;
  readonly databases: DatabaseManager;
  readonly limiter: Limiter;
  readonly sandboxLimits: SandboxLimits;
  readonly scratchDir: string;
  readonly timeoutMs: number;
  readonly cache: SheetCache<SearchableSheet>;
}

/** What the searches of one sheet version share, beside its copy. */
export interface SearchableSheet {
  readonly columns: readonly { name: string; text: boolean }[];
  /** The terms of the text columns and their rows; absent when the sheet has none. */
  readonly index: SheetTermIndex | undefined;
}

/** The engine's memory is counted in blocks; an instance also holds threads and a catalog. */
const INSTANCE_OVERHEAD_BYTES = 4 << 20;

export async function searchSheet(deps: SheetSearchDeps, request: SheetSearchRequest): Promise<SheetSearchResponse> {
  return deps.limiter.run(async () => {
    const lease = deps.databases.lease();
    if (!lease) throw unavailableError('The query service is starting and has no database open yet.');
    // One deadline for the whole search, the opening of an uncached sheet included.
    const expiresAt = performance.now() + deps.timeoutMs;
    const remaining = () => Math.max(1, expiresAt - performance.now());
    try {
      return await deps.cache.use(request.key, () => openSearchable(deps, request.key, remaining()), async (sheet) => {
        const connection = await sheet.instance.connect();
        try {
          const checkDeadline = deadlineCheck(remaining());
          return { rows: await withDeadline(connection, remaining(), () => runSearch(connection, sheet.prepared, request, checkDeadline)) };
        } finally {
          connection.closeSync();
        }
      });
    } catch (error) {
      throw runnerErrorOf(error instanceof DeadlineExceeded ? new DeadlineExceeded(deps.timeoutMs) : error);
    } finally {
      lease.release();
    }
  });
}

async function openSearchable(deps: SheetSearchDeps, key: string, timeoutMs: number): Promise<OpenSheet<SearchableSheet>> {
  const folder = join(deps.scratchDir, `search-${randomUUID()}`);
  try {
    const path = await download(deps.store, key, folder);
    const { instance, prepared } = await openSheetCopy(deps.sandboxLimits, { name: 'sheet', path }, timeoutMs, prepareSearch);
    return { instance, prepared: prepared.sheet, bytes: prepared.bytes };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

async function download(store: ObjectStore, key: string, folder: string): Promise<string> {
  await mkdir(folder, { recursive: true });
  const object = await store.get(key);
  if (!object) throw new RunnerError('QUERY_INVALID', 'The connected sheet is not available.');
  const path = join(folder, 'sheet.parquet');
  await pipeline(object.body, createWriteStream(path));
  return path;
}

/** Reads the copy's columns and builds its term index. */
async function prepareSearch(connection: DuckDBConnection): Promise<{ sheet: SearchableSheet; bytes: number }> {
  const described = await connection.runAndReadAll(
    "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = 'memory' AND table_name = 'sheet' ORDER BY column_index",
  );
  const columns = described.getRows().map((row) => ({ name: String(row[0]), text: String(row[1]) === 'VARCHAR' }));
  const textColumns = columns.filter((c) => c.text).map((c) => quoteIdent(c.name));
  const index = textColumns.length > 0 ? await sheetTermIndex(connection, `concat_ws(' ', ${textColumns.join(', ')})`) : undefined;
  if (index) {
    // Each cell as ILIKE reads it (its text, lower-cased), once: the containment scan was most of a search.
    const cells = columns.map(({ name }, i) => `lower(CAST(${quoteIdent(name)} AS VARCHAR)) AS _c${i}`);
    await connection.run(`CREATE TABLE memory.main.sheet_cells AS SELECT ${cells.join(', ')} FROM memory.main.sheet`);
  }
  const memory = await connection.runAndReadAll('SELECT coalesce(sum(memory_usage_bytes), 0)::BIGINT FROM duckdb_memory()');
  const indexBytes = index ? index.terms.bytes.length + index.terms.ends.byteLength + index.rows.reduce((sum, rows) => sum + rows.byteLength + 64, 0) : 0;
  return { sheet: { columns, index }, bytes: Number(memory.getRows()[0]![0]) + INSTANCE_OVERHEAD_BYTES + indexBytes };
}

/** The distinct terms of the text columns, as a sorted dictionary, with the rows holding each. */
async function sheetTermIndex(connection: DuckDBConnection, text: string): Promise<SheetTermIndex> {
  const reader = await connection.runAndReadAll(
    `SELECT term, list(_row ORDER BY _row) FROM (SELECT DISTINCT unnest(${searchTermsSql(text)}) AS term, rowid::INTEGER AS _row FROM memory.main.sheet)
     WHERE term <> '' GROUP BY term ORDER BY term`,
  );
  const found = reader.getRows();
  const builder = new SortedTextsBuilder(found.length, found.reduce((sum, row) => sum + Buffer.byteLength(String(row[0])), 0));
  for (const row of found) builder.append(String(row[0]));
  const rows = found.map((row) => Int32Array.from((row[1] as DuckDBListValue).items as number[]));
  const count = await connection.runAndReadAll('SELECT count(*)::INTEGER FROM memory.main.sheet');
  return { terms: builder.finish(), rows, rowCount: Number(count.getRows()[0]![0]) };
}

/** The rows matching the text; `checkDeadline` bounds the work between the queries, which the deadline's interrupt may miss. */
async function runSearch(
  connection: DuckDBConnection,
  sheet: SearchableSheet,
  request: SheetSearchRequest,
  checkDeadline: () => void,
): Promise<Record<string, unknown>[]> {
  const { columns, index } = sheet;
  if (columns.length === 0) return [];
  const contains = columns.map(({ name }) => `CAST(${quoteIdent(name)} AS VARCHAR) ILIKE $1 ESCAPE '\\'`).join(' OR ');
  const words = queryTerms(request.q);
  if (!index || words.length === 0) {
    const sql = `SELECT * FROM memory.main.sheet WHERE ${contains} LIMIT ${request.limit}`;
    return (await connection.runAndReadAll(sql, [likePattern(request.q)])).convertRowObjects(jsonValue) as Record<string, unknown>[];
  }
  const accepted = sheetWordTerms(index.terms, words, checkDeadline);
  checkDeadline();
  // `x ILIKE '%q%'` is `lower(x)` containing `lower(q)`: ILIKE lower-cases both sides, and the pattern's wildcards are escaped.
  const containsLowered = columns.map((_, i) => `contains(_c${i}, lower($1))`).join(' OR ');
  const containing = await connection.runAndReadAll(`SELECT rowid::INTEGER FROM memory.main.sheet_cells WHERE ${containsLowered}`, [request.q]);
  checkDeadline();
  const ranked = rankSheetRows(index, accepted, containing.getRows().map((row) => row[0] as number), request.limit);
  if (ranked.length === 0) return [];
  // Read in row order (the i-th row read is the i-th smallest id), then put in the ranking's order.
  // The ids are one bound list: a thousand literals cost more to plan than the read itself.
  const ascending = Int32Array.from(ranked).sort();
  const reader = await connection.runAndReadAll(
    'SELECT * FROM memory.main.sheet WHERE rowid IN (SELECT unnest($1)) ORDER BY rowid',
    [listValue(Array.from(ascending))],
    [LIST(INTEGER)],
  );
  const read = reader.convertRowObjects(jsonValue) as Record<string, unknown>[];
  const byId = new Map(Array.from(ascending, (id, i) => [id, read[i]!]));
  return ranked.map((id) => byId.get(id)!);
}
