/**
 * Keyword search over one connected sheet: our own parameterised SQL, not the user's, so it skips
 * the textual SQL validator (the search text is a bound parameter, never SQL). It still runs in a
 * one-query sandbox, under the concurrency limiter and the query deadline (interrupt → QUERY_TIMEOUT).
 *
 * A row matches when a column contains the text (case-insensitive), or when its text columns hold
 * every word of it with the stored lookups' forgiveness (`sheetWordTerms`): the word, a word with
 * its Porter2 stem, or one within its typo budget. Rows containing the text come first, then by
 * how far their words are from the typed ones (exact, stem, one typo, two), then in sheet order.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { randomUUID } from 'node:crypto';
import type { DuckDBConnection } from '@duckdb/node-api';
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
import { openSheetSandbox } from '../sandbox.ts';
import type { SandboxLimits } from '../sandbox.ts';

export interface SheetSearchDeps {
  readonly store: ObjectStore;
  readonly databases: DatabaseManager;
  readonly limiter: Limiter;
  readonly sandboxLimits: SandboxLimits;
  readonly scratchDir: string;
  readonly timeoutMs: number;
}

export async function searchSheet(deps: SheetSearchDeps, request: SheetSearchRequest): Promise<SheetSearchResponse> {
  return deps.limiter.run(async () => {
    const lease = deps.databases.lease();
    if (!lease) throw unavailableError('The query service is starting and has no database open yet.');
    const folder = join(deps.scratchDir, `search-${randomUUID()}`);
    try {
      const path = await download(deps.store, request.key, folder);
      const { instance, connection } = await openSheetSandbox(lease.database.path, deps.sandboxLimits, [{ name: 'sheet', path }]);
      try {
        const checkDeadline = deadlineCheck(deps.timeoutMs);
        return { rows: await withDeadline(connection, deps.timeoutMs, () => runSearch(connection, request, checkDeadline)) };
      } catch (error) {
        throw runnerErrorOf(error);
      } finally {
        connection.closeSync();
        instance.closeSync();
      }
    } finally {
      lease.release();
      await rm(folder, { recursive: true, force: true });
    }
  });
}

async function download(store: ObjectStore, key: string, folder: string): Promise<string> {
  await mkdir(folder, { recursive: true });
  const object = await store.get(key);
  if (!object) throw new RunnerError('QUERY_INVALID', 'The connected sheet is not available.');
  const path = join(folder, 'sheet.parquet');
  await pipeline(object.body, createWriteStream(path));
  return path;
}

/** The distinct terms of the text columns, as a sorted dictionary. */
async function sheetTerms(connection: DuckDBConnection, text: string): Promise<SortedTexts> {
  const reader = await connection.runAndReadAll(
    `SELECT DISTINCT term FROM (SELECT unnest(${searchTermsSql(text)}) AS term FROM memory.main.sheet) WHERE term <> '' ORDER BY term`,
  );
  const rows = reader.getRows().map((row) => String(row[0]));
  const builder = new SortedTextsBuilder(rows.length, rows.reduce((sum, term) => sum + Buffer.byteLength(term), 0));
  for (const term of rows) builder.append(term);
  return builder.finish();
}

/** The rows matching the text; `checkDeadline` bounds the work between the queries, which the deadline's interrupt may miss. */
async function runSearch(connection: DuckDBConnection, request: SheetSearchRequest, checkDeadline: () => void): Promise<Record<string, unknown>[]> {
  const described = await connection.runAndReadAll(
    "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = 'memory' AND table_name = 'sheet' ORDER BY column_index",
  );
  const columns = described.getRows().map((row) => ({ name: String(row[0]), text: String(row[1]) === 'VARCHAR' }));
  if (columns.length === 0) return [];
  const contains = columns.map(({ name }) => `CAST(${quoteIdent(name)} AS VARCHAR) ILIKE $1 ESCAPE '\\'`).join(' OR ');
  const textColumns = columns.filter((c) => c.text).map((c) => quoteIdent(c.name));
  const words = queryTerms(request.q);
  if (textColumns.length === 0 || words.length === 0) {
    const sql = `SELECT * FROM memory.main.sheet WHERE ${contains} LIMIT ${request.limit}`;
    return (await connection.runAndReadAll(sql, [likePattern(request.q)])).convertRowObjects(jsonValue) as Record<string, unknown>[];
  }
  const text = `concat_ws(' ', ${textColumns.join(', ')})`;
  const dictionary = await sheetTerms(connection, text);
  checkDeadline();
  const accepted = sheetWordTerms(dictionary, words, checkDeadline);
  checkDeadline();
  const distances = accepted.map((word, i) => `${distanceSql(word)} AS _d${i}`);
  const every = accepted.map((_, i) => `_d${i} IS NOT NULL`).join(' AND ');
  const total = accepted.map((_, i) => `coalesce(_d${i}, 0)`).join(' + ');
  const sql = `SELECT * EXCLUDE (_contains, _terms, _row, ${accepted.map((_, i) => `_d${i}`).join(', ')}) FROM (
      SELECT *, ${distances.join(', ')} FROM (
        SELECT *, (${contains}) AS _contains, ${searchTermsSql(text)} AS _terms, rowid AS _row FROM memory.main.sheet))
    WHERE _contains OR (${every})
    ORDER BY _contains DESC, ${total}, _row
    LIMIT ${request.limit}`;
  const reader = await connection.runAndReadAll(sql, [likePattern(request.q)]);
  return reader.convertRowObjects(jsonValue) as Record<string, unknown>[];
}
