/**
 * Creating, replacing and deleting connected sheets (DECISIONS §8). The raw upload goes to the
 * object store first and the row last, so a row never points at a missing file; ingestion itself
 * runs in the sheets worker, which claims the `processing` row.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { ObjectStore } from '@uda/shared/object-store';
import { SHEET_QUOTAS, type SheetQuota, type SheetUsage, sheetQuotaProblem } from '../accounts/quotas.ts';
import type { AccountStore } from '../accounts/store.ts';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import { formatOf } from './formats.ts';
import { slugFrom, slugProblem } from './names.ts';
import {
  type DatasetRow,
  deleteDataset,
  findDataset,
  insertDataset,
  lockAccount,
  type NewUpload,
  replaceUpload,
  sheetPrefix,
  sheetUsage,
  slugTaken,
  uploadPrefix,
} from './store.ts';
import type { ReceivedFile } from './upload.ts';

export interface SheetDeps {
  readonly db: Knex;
  readonly store: ObjectStore;
}

/** Creating and replacing also need the account's tier, for its quota. */
export interface SheetWriteDeps extends SheetDeps {
  readonly accounts: Pick<AccountStore, 'mustGet'>;
}

type QuotaChange = Parameters<typeof sheetQuotaProblem>[2];

const invalid = (message: string) => new ApiError(ErrorCode.INVALID_INPUT, { message });
const notFound = () => new ApiError(ErrorCode.DATASET_NOT_FOUND);

/** One of the caller's sheets; absent and another account's answer alike (SPEC Authorization §7). */
export async function ownedSheet(deps: SheetDeps, accountId: string, idOrSlug: string): Promise<DatasetRow> {
  const row = await findDataset(deps.db, accountId, idOrSlug);
  if (!row) throw notFound();
  return row;
}

/** The account's sheets quota and what it uses now. */
export async function sheetQuotaOf(deps: SheetWriteDeps, accountId: string): Promise<{ quota: SheetQuota; usage: SheetUsage }> {
  const { tier } = await deps.accounts.mustGet(accountId);
  return { quota: SHEET_QUOTAS[tier], usage: await sheetUsage(deps.db, accountId) };
}

/** 403 when the change does not fit the quota; `db` may be a transaction holding the account. */
async function requireQuota(db: Knex, accountId: string, quota: SheetQuota, change: QuotaChange): Promise<void> {
  const problem = sheetQuotaProblem(quota, await sheetUsage(db, accountId), change);
  if (problem) throw new ApiError(ErrorCode.SHEET_QUOTA_EXCEEDED, { message: problem });
}

/** Checks the change against the account's quota now; returns the quota for the check under lock. */
async function quotaAllowing(deps: SheetWriteDeps, accountId: string, change: QuotaChange): Promise<SheetQuota> {
  const { quota, usage } = await sheetQuotaOf(deps, accountId);
  const problem = sheetQuotaProblem(quota, usage, change);
  if (problem) throw new ApiError(ErrorCode.SHEET_QUOTA_EXCEEDED, { message: problem });
  return quota;
}

/**
 * Writes the row only if the change still fits once the account is locked (uploads racing each other
 * were each checked before their file was stored); on any refusal the stored file is removed. Only
 * `trx` is used inside: embedded PGlite has a single connection.
 */
async function writeWithinQuota(
  deps: SheetWriteDeps,
  accountId: string,
  limits: { quota: SheetQuota; change: QuotaChange },
  uploadKey: string,
  write: (trx: Knex) => Promise<boolean>,
): Promise<boolean> {
  try {
    const written = await deps.db.transaction(async (trx) => {
      await lockAccount(trx, accountId);
      await requireQuota(trx, accountId, limits.quota, limits.change);
      return write(trx);
    });
    if (!written) await deps.store.delete([uploadKey]);
    return written;
  } catch (error) {
    await deps.store.delete([uploadKey]);
    throw error;
  }
}

export async function createSheet(
  deps: SheetWriteDeps,
  accountId: string,
  input: { file: ReceivedFile; name?: string; slug?: string },
): Promise<DatasetRow> {
  const format = requireFormat(input.file);
  if (input.slug !== undefined) {
    const problem = slugProblem(input.slug);
    if (problem) throw invalid(problem);
  }
  const name = (input.name ?? '').trim().slice(0, 200) || input.file.fileName || 'Sheet';
  const slug = input.slug ?? (await freeSlug(deps.db, accountId, slugFrom(input.name || input.file.fileName)));
  const change = { newSheet: true, bytes: input.file.bytes };
  const quota = await quotaAllowing(deps, accountId, change);
  const id = randomUUID();
  const upload = await storeUpload(deps.store, accountId, id, 1, input.file, format);
  if (!(await writeWithinQuota(deps, accountId, { quota, change }, upload.uploadKey, (trx) => insertDataset(trx, { id, accountId, slug, name, upload })))) {
    throw new ApiError(ErrorCode.DATASET_CONFLICT, { message: `The slug "${slug}" is already used by another of your sheets.` });
  }
  return (await findDataset(deps.db, accountId, id))!;
}

export async function replaceSheetFile(deps: SheetWriteDeps, accountId: string, idOrSlug: string, file: ReceivedFile): Promise<DatasetRow> {
  const format = requireFormat(file);
  const row = await ownedSheet(deps, accountId, idOrSlug);
  const change = { newSheet: false, bytes: file.bytes, replacedBytes: Number(row.upload_bytes ?? 0) };
  const quota = await quotaAllowing(deps, accountId, change);
  const version = row.version + 1;
  const upload = await storeUpload(deps.store, accountId, row.id, version, file, format);
  // False when deleted or replaced by a concurrent request between our read and our update.
  if (!(await writeWithinQuota(deps, accountId, { quota, change }, upload.uploadKey, (trx) => replaceUpload(trx, row.id, version, upload)))) {
    throw new ApiError(ErrorCode.DATASET_CONFLICT, { message: 'The sheet changed during this upload; retry it.' });
  }
  await deps.store.delete([row.upload_key]);
  return (await findDataset(deps.db, accountId, row.id))!;
}

/** The row goes first, so nothing serves the objects while they are being removed. */
export async function deleteSheet(deps: SheetDeps, accountId: string, idOrSlug: string): Promise<void> {
  const row = await ownedSheet(deps, accountId, idOrSlug);
  await deleteDataset(deps.db, row.id);
  const objects = [
    ...(await deps.store.list(uploadPrefix(accountId, row.id))),
    ...(await deps.store.list(sheetPrefix(accountId, row.id))),
  ];
  if (objects.length > 0) await deps.store.delete(objects.map((o) => o.key));
}

function requireFormat(file: ReceivedFile) {
  const format = formatOf(file.fileName, file.contentType);
  if (!format) throw invalid('Unsupported file type: upload CSV, TSV, JSON, NDJSON or Parquet (by file extension or content type).');
  return format;
}

async function storeUpload(
  store: ObjectStore,
  accountId: string,
  id: string,
  version: number,
  file: ReceivedFile,
  format: NewUpload['format'],
): Promise<NewUpload> {
  const uploadKey = `${uploadPrefix(accountId, id)}${version}`;
  await store.putFile(uploadKey, file.path, { contentType: 'application/octet-stream' });
  return { uploadKey, format, bytes: file.bytes };
}

/** A derived slug never clashes: a short random suffix is added when the plain one is taken. */
async function freeSlug(db: Knex, accountId: string, base: string): Promise<string> {
  if (!(await slugTaken(db, accountId, base))) return base;
  return `${base}-${randomUUID().slice(0, 6)}`;
}
