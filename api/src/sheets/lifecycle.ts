/**
 * Creating, replacing and deleting connected sheets (DECISIONS §8). The raw upload goes to the
 * object store first and the row last, so a row never points at a missing file; ingestion itself
 * runs in the sheets worker, which claims the `processing` row.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { ObjectStore } from '@uda/shared/object-store';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import { formatOf } from './formats.ts';
import { slugFrom, slugProblem } from './names.ts';
import {
  type DatasetRow,
  deleteDataset,
  findDataset,
  insertDataset,
  type NewUpload,
  replaceUpload,
  sheetPrefix,
  slugTaken,
  uploadPrefix,
} from './store.ts';
import type { ReceivedFile } from './upload.ts';

export interface SheetDeps {
  readonly db: Knex;
  readonly store: ObjectStore;
}

const invalid = (message: string) => new ApiError(ErrorCode.INVALID_INPUT, { message });
const notFound = () => new ApiError(ErrorCode.DATASET_NOT_FOUND);

/** One of the caller's sheets; absent and another account's answer alike (SPEC Authorization §7). */
export async function ownedSheet(deps: SheetDeps, accountId: string, idOrSlug: string): Promise<DatasetRow> {
  const row = await findDataset(deps.db, accountId, idOrSlug);
  if (!row) throw notFound();
  return row;
}

export async function createSheet(
  deps: SheetDeps,
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
  const id = randomUUID();
  const upload = await storeUpload(deps.store, accountId, id, 1, input.file, format);
  if (!(await insertDataset(deps.db, { id, accountId, slug, name, upload }))) {
    await deps.store.delete([upload.uploadKey]);
    throw new ApiError(ErrorCode.DATASET_CONFLICT, { message: `The slug "${slug}" is already used by another of your sheets.` });
  }
  return (await findDataset(deps.db, accountId, id))!;
}

export async function replaceSheetFile(deps: SheetDeps, accountId: string, idOrSlug: string, file: ReceivedFile): Promise<DatasetRow> {
  const format = requireFormat(file);
  const row = await ownedSheet(deps, accountId, idOrSlug);
  const version = row.version + 1;
  const upload = await storeUpload(deps.store, accountId, row.id, version, file, format);
  if (!(await replaceUpload(deps.db, row.id, version, upload))) {
    // Deleted or replaced by a concurrent request between our read and our update.
    await deps.store.delete([upload.uploadKey]);
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
