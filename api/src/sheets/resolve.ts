/**
 * Connected sheets named in `/api/v1/query` `datasetIds` and the GET routes' `datasets`
 * (SPEC Errors 403): only the caller's ready sheets; any other id is refused, naming it.
 */
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import type { SheetDeps } from './lifecycle.ts';
import { sqlNameOf } from './names.ts';
import { findDataset } from './store.ts';

export interface ResolvedDataset {
  readonly id: string;
  /** The table name in SQL: the slug made SQL-safe. */
  readonly name: string;
  /** Object key of the ready Parquet version. */
  readonly key: string;
  /** Goes into the query id, so a re-upload never serves a stale cached result. */
  readonly version: number;
}

export async function resolveDatasets(services: SheetDeps, accountId: string, ids: readonly string[]): Promise<ResolvedDataset[]> {
  const resolved: ResolvedDataset[] = [];
  for (const id of new Set(ids)) {
    const row = await findDataset(services.db, accountId, id);
    if (!row || row.status !== 'ready' || !row.parquet_key) {
      throw new ApiError(ErrorCode.DATASET_FORBIDDEN, { message: `Dataset "${id}" is not one of your ready connected sheets.` });
    }
    if (!resolved.some((r) => r.id === row.id)) resolved.push({ id: row.id, name: sqlNameOf(row.slug), key: row.parquet_key, version: row.version });
  }
  return resolved;
}
