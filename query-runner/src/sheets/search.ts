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
 * Each sheet version is opened once (`sheet-cache.ts`): its copy holds every row's terms in `_terms`
 * and its sheet order in `_row`, and its term dictionary is kept beside it, so a search is one query.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { randomUUID } from 'node:crypto';
import type { DuckDBConnection } from '@duckdb/node-api';
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
import { type SortedTexts, SortedTextsBuilder } from '@uda/search/index';
import { distanceSql, likePattern, sheetWordTerms } from '@uda/search/sheets';
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
  /** The distinct terms of the text columns; absent when the sheet has none. */
  readonly terms: SortedTexts | undefined;
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

/** Adds each row's terms and sheet order to the copy, and reads its columns and term dictionary. */
async function prepareSearch(connection: DuckDBConnection): Promise<{ sheet: SearchableSheet; bytes: number }> {
  const described = await connection.runAndReadAll(
    "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = 'memory' AND table_name = 'sheet' ORDER BY column_index",
  );
  const columns = described.getRows().map((row) => ({ name: String(row[0]), text: String(row[1]) === 'VARCHAR' }));
  const textColumns = columns.filter((c) => c.text).map((c) => quoteIdent(c.name));
  let terms: SortedTexts | undefined;
  if (textColumns.length > 0) {
    await connection.run(
      `CREATE TABLE memory.main.sheet_terms AS SELECT *, ${searchTermsSql(`concat_ws(' ', ${textColumns.join(', ')})`)} AS _terms, rowid AS _row FROM memory.main.sheet`,
    );
    await connection.run('DROP TABLE memory.main.sheet');
    await connection.run('ALTER TABLE memory.main.sheet_terms RENAME TO sheet');
    terms = await sheetTerms(connection);
  }
  const memory = await connection.runAndReadAll('SELECT coalesce(sum(memory_usage_bytes), 0)::BIGINT FROM duckdb_memory()');
  const bytes = Number(memory.getRows()[0]![0]) + INSTANCE_OVERHEAD_BYTES + (terms ? terms.bytes.length + terms.ends.byteLength : 0);
  return { sheet: { columns, terms }, bytes };
}

/** The distinct terms of the text columns, as a sorted dictionary. */
async function sheetTerms(connection: DuckDBConnection): Promise<SortedTexts> {
  const reader = await connection.runAndReadAll(
    `SELECT DISTINCT term FROM (SELECT unnest(_terms) AS term FROM memory.main.sheet) WHERE term <> '' ORDER BY term`,
  );
  const rows = reader.getRows().map((row) => String(row[0]));
  const builder = new SortedTextsBuilder(rows.length, rows.reduce((sum, term) => sum + Buffer.byteLength(term), 0));
  for (const term of rows) builder.append(term);
  return builder.finish();
}

/** The rows matching the text; `checkDeadline` bounds the work between the queries, which the deadline's interrupt may miss. */
async function runSearch(
  connection: DuckDBConnection,
  sheet: SearchableSheet,
  request: SheetSearchRequest,
  checkDeadline: () => void,
): Promise<Record<string, unknown>[]> {
  const { columns, terms } = sheet;
  if (columns.length === 0) return [];
  const contains = columns.map(({ name }) => `CAST(${quoteIdent(name)} AS VARCHAR) ILIKE $1 ESCAPE '\\'`).join(' OR ');
  const words = queryTerms(request.q);
  if (!terms || words.length === 0) {
    const sheetColumns = terms ? '* EXCLUDE (_terms, _row)' : '*';
    const sql = `SELECT ${sheetColumns} FROM memory.main.sheet WHERE ${contains} LIMIT ${request.limit}`;
    return (await connection.runAndReadAll(sql, [likePattern(request.q)])).convertRowObjects(jsonValue) as Record<string, unknown>[];
  }
  const accepted = sheetWordTerms(terms, words, checkDeadline);
  checkDeadline();
  const distances = accepted.map((word, i) => `${distanceSql(word)} AS _d${i}`);
  const every = accepted.map((_, i) => `_d${i} IS NOT NULL`).join(' AND ');
  const total = accepted.map((_, i) => `coalesce(_d${i}, 0)`).join(' + ');
  const sql = `SELECT * EXCLUDE (_contains, _terms, _row, ${accepted.map((_, i) => `_d${i}`).join(', ')}) FROM (
      SELECT *, ${distances.join(', ')} FROM (
        SELECT *, (${contains}) AS _contains FROM memory.main.sheet))
    WHERE _contains OR (${every})
    ORDER BY _contains DESC, ${total}, _row
    LIMIT ${request.limit}`;
  const reader = await connection.runAndReadAll(sql, [likePattern(request.q)]);
  return reader.convertRowObjects(jsonValue) as Record<string, unknown>[];
}
