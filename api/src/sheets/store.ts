/**
 * The `datasets` table as the API sees it (migration in `@uda/shared/db/datasets`). The row is
 * also the worker's job: an insert or a version bump with `status = 'processing'`, `attempts = 0`
 * and no lease enqueues it (the contract in exporter/src/sheets/queue.ts).
 */
import type { Knex } from 'knex';
import type { UploadFormat } from './formats.ts';
import { isUuid } from './names.ts';

export interface DatasetRow {
  readonly id: string;
  readonly account_id: string;
  readonly slug: string;
  readonly name: string;
  readonly status: 'processing' | 'ready' | 'failed';
  readonly error: string | null;
  readonly row_count: string | number | null;
  readonly columns: { name: string; type: string }[] | null;
  readonly version: number;
  readonly upload_key: string;
  readonly upload_bytes: string | number | null;
  readonly parquet_key: string | null;
  readonly created_at: Date | string;
  readonly updated_at: Date | string;
}

export interface NewUpload {
  readonly uploadKey: string;
  readonly format: UploadFormat;
  readonly bytes: number;
}

/** `sheets/<account>/<id>/` holds the Parquet versions (worker) and `uploads/…` the raw files (API). */
export function uploadPrefix(accountId: string, id: string): string {
  return `uploads/${encodeURIComponent(accountId)}/${id}/`;
}

export function sheetPrefix(accountId: string, id: string): string {
  return `sheets/${encodeURIComponent(accountId)}/${id}/`;
}

/** One of the caller's sheets by UUID or slug; another account's sheet is simply not found. */
export async function findDataset(db: Knex, accountId: string, idOrSlug: string): Promise<DatasetRow | undefined> {
  const column = isUuid(idOrSlug) ? 'id' : 'slug';
  const value = column === 'id' ? idOrSlug.toLowerCase() : idOrSlug;
  return (await db('datasets').where({ account_id: accountId, [column]: value }).first()) as DatasetRow | undefined;
}

export async function listDatasets(db: Knex, accountId: string): Promise<DatasetRow[]> {
  return (await db('datasets').where({ account_id: accountId }).orderBy('created_at', 'desc')) as DatasetRow[];
}

/** How many sheets the account holds and the bytes of their uploaded files (its quota's usage). */
export async function sheetUsage(db: Knex, accountId: string): Promise<{ sheets: number; bytes: number }> {
  const row = (await db('datasets')
    .where({ account_id: accountId })
    .first(db.raw('count(*) as sheets'), db.raw('coalesce(sum(upload_bytes), 0) as bytes'))) as { sheets: string | number; bytes: string | number } | undefined;
  return { sheets: Number(row?.sheets ?? 0), bytes: Number(row?.bytes ?? 0) };
}

/** Holds the account's row until the transaction ends, so two uploads cannot both pass its quota. */
export async function lockAccount(trx: Knex.Transaction, accountId: string): Promise<void> {
  await trx('accounts').where({ id: accountId }).forUpdate().first('id');
}

export async function slugTaken(db: Knex, accountId: string, slug: string): Promise<boolean> {
  return (await db('datasets').where({ account_id: accountId, slug }).first('id')) !== undefined;
}

/** Inserts a `processing` row (enqueues ingestion). False when the slug is taken (unique index). */
export async function insertDataset(
  db: Knex,
  row: { id: string; accountId: string; slug: string; name: string; upload: NewUpload },
): Promise<boolean> {
  const inserted = (await db('datasets')
    .insert({
      id: row.id,
      account_id: row.accountId,
      slug: row.slug,
      name: row.name,
      status: 'processing',
      version: 1,
      attempts: 0,
      upload_key: row.upload.uploadKey,
      upload_format: row.upload.format,
      upload_bytes: row.upload.bytes,
    })
    .onConflict(['account_id', 'slug'])
    .ignore()
    .returning('id')) as unknown[];
  return inserted.length === 1;
}

/** A new version back to `processing` in one UPDATE (re-enqueues); the new version, if the row exists. */
export async function replaceUpload(db: Knex, id: string, version: number, upload: NewUpload): Promise<boolean> {
  const updated = await db('datasets').where({ id, version: version - 1 }).update({
    version,
    status: 'processing',
    error: null,
    upload_key: upload.uploadKey,
    upload_format: upload.format,
    upload_bytes: upload.bytes,
    attempts: 0,
    locked_until: null,
    updated_at: db.fn.now(),
  });
  return updated === 1;
}

export async function deleteDataset(db: Knex, id: string): Promise<void> {
  await db('datasets').where({ id }).delete();
}
