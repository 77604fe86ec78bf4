/**
 * Search and SQL on one connected sheet, through the runner's HTTP contract. Both are bounded by
 * the runner (30 s deadline, 1,000 rows); the SQL goes through the same validator and sandbox as
 * `/api/v1/query`.
 */
import { allTables } from '@uda/shared/catalog';
import { type RunnerClient, rowsOf } from '../runners/client.ts';
import type { FairCaller, FairShare } from '../fair/fair-share.ts';
import { runnerPlaceOf } from '../fair/rules.ts';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import { queryIdOf } from '../sql/query-id.ts';
import { sqlFailure } from '../sql/runner-errors.ts';
import { type SheetDeps, ownedSheet } from './lifecycle.ts';
import { sqlNameOf } from './names.ts';
import type { DatasetRow } from './store.ts';

export interface SheetQueryDeps extends SheetDeps {
  readonly runners: RunnerClient;
  readonly fairShare: FairShare;
}

export const MAX_SEARCH_ROWS = 1000;

export interface SheetRows {
  readonly row_count: number;
  readonly rows: Record<string, unknown>[];
}

function readyKey(row: DatasetRow): string {
  // SPEC: a dataset that is not ready is refused with 403 ("not ready" is a 403 across the API).
  if (row.status !== 'ready' || !row.parquet_key) {
    throw new ApiError(ErrorCode.DATASET_FORBIDDEN, { message: `Dataset "${row.slug}" is not ready (status: ${row.status}).` });
  }
  return row.parquet_key;
}

export async function searchSheet(deps: SheetQueryDeps, accountId: string, idOrSlug: string, q: string): Promise<SheetRows> {
  const key = readyKey(await ownedSheet(deps, accountId, idOrSlug));
  const result = await deps.runners.searchSheet({ key, q, limit: MAX_SEARCH_ROWS }).catch((error: unknown) => {
    throw sqlFailure(error);
  });
  return { row_count: result.rows.length, rows: result.rows };
}

export async function querySheet(
  deps: SheetQueryDeps,
  caller: FairCaller,
  idOrSlug: string,
  sql: string,
): Promise<SheetRows & { sql_executed: string }> {
  const { accountId } = caller;
  const row = await ownedSheet(deps, accountId, idOrSlug);
  const key = readyKey(row);
  const names = [...new Set(['sheet', sqlNameOf(row.slug)])];
  const run = { queryId: sheetQueryId(accountId, row, sql), sql, format: 'json' as const, datasets: names.map((name) => ({ name, key })), ...runnerPlaceOf(caller) };
  // User SQL: the same fair share as /api/v1/query (DECISIONS §4).
  const response = await deps.fairShare.run(caller, () => deps.runners.runQuery(run)).catch((error: unknown) => {
    throw sqlFailure(error);
  });
  // This route is uncharged (DECISIONS §3), so it reads only the sheet: a public table here would
  // be free data. Joins with public tables belong to /api/v1/query, which bills them.
  if (response.result.tables.some((table) => PUBLIC_TABLES.has(table))) {
    throw new ApiError(ErrorCode.QUERY_INVALID, { message: 'Sheet queries read only the sheet; join public tables through /api/v1/query with datasetIds.' });
  }
  const rows = rowsOf(response);
  return { row_count: rows.length, rows, sql_executed: response.result.sqlExecuted };
}

const PUBLIC_TABLES = new Set(allTables());

/**
 * The runner caches results by query id for 5 minutes. The id covers the sheet's version, so a
 * re-upload never serves the old result; the export-version slot holds this route's own marker, so
 * it never shares an id (and a cached, billed result) with /api/v1/query.
 */
export function sheetQueryId(accountId: string, row: Pick<DatasetRow, 'id' | 'version'>, sql: string): string {
  return queryIdOf({ accountId, sql, datasets: [{ id: row.id, version: String(row.version) }], exportVersion: 'sheet-route' });
}
