/**
 * Keyword search over one connected sheet: our own parameterised SQL, not the user's, so it skips
 * the textual SQL validator (the search text is a bound parameter, never SQL). It still runs in a
 * one-query sandbox, under the concurrency limiter and the query deadline (interrupt → QUERY_TIMEOUT).
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
import { withDeadline } from '../deadline.ts';
import { jsonValue } from '../json-values.ts';
import type { Limiter } from '../limiter.ts';
import { quoteIdent } from '@uda/shared/duckdb';
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
        return { rows: await withDeadline(connection, deps.timeoutMs, () => runSearch(connection, request)) };
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

/** `LIKE` wildcards in the text are literal: the search is a plain substring match. */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

async function runSearch(connection: DuckDBConnection, request: SheetSearchRequest): Promise<Record<string, unknown>[]> {
  const described = await connection.runAndReadAll(
    "SELECT column_name FROM duckdb_columns() WHERE database_name = 'memory' AND table_name = 'sheet' ORDER BY column_index",
  );
  const columns = described.getRows().map((row) => String(row[0]));
  if (columns.length === 0) return [];
  const match = columns.map((name) => `CAST(${quoteIdent(name)} AS VARCHAR) ILIKE $1 ESCAPE '\\'`).join(' OR ');
  const sql = `SELECT * FROM memory.main.sheet WHERE ${match} LIMIT ${request.limit}`;
  const reader = await connection.runAndReadAll(sql, [likePattern(request.q)]);
  return reader.convertRowObjects(jsonValue) as Record<string, unknown>[];
}

