/** The sheet record the API shows (DECISIONS §8): `{id, slug, name, status, row_count, columns, created_at, updated_at, error?}`. */
import type { DatasetRecord } from './record-schema.ts';
import type { DatasetRow } from './store.ts';

export { datasetRecordSchema, type DatasetRecord } from './record-schema.ts';

const iso = (value: Date | string) => new Date(value).toISOString();

export function toRecord(row: DatasetRow): DatasetRecord {
  // pg returns BIGINT as a string; the last ready version's facts stay visible while re-processing.
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    status: row.status,
    row_count: row.row_count === null ? null : Number(row.row_count),
    columns: row.columns ?? [],
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    ...(row.status === 'failed' && row.error ? { error: row.error } : {}),
  };
}
