/**
 * Connected-sheet handlers: they only translate HTTP to the functions in `api/src/sheets/` and
 * back. Every route runs behind `requireSheetKey`, so the caller is an account here.
 */
import type { Request, RequestHandler } from 'express';
import type { z } from 'zod';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import { callerOf } from '../request-context.ts';
import type { ApiConfig } from '../config.ts';
import { createSheet, deleteSheet, ownedSheet, replaceSheetFile, type SheetWriteDeps, sheetQuotaOf } from './lifecycle.ts';
import { querySheet, type SheetQueryDeps, searchSheet } from './query.ts';
import { datasetRecordSchema, toRecord } from './record.ts';
import { listDatasets } from './store.ts';
import { receiveUpload, type ReceivedUpload } from './upload.ts';
import { inputOf } from '../routes/validate.ts';
import { createdResponse, datasetId, listResponse, queryResponse, searchQuery, searchResponse, sheetQueryBody, uploadFields } from './schema.ts';

function accountOf(req: Request): string {
  const caller = callerOf(req);
  if (caller.kind !== 'account') throw new ApiError(ErrorCode.SHEET_AUTH_REQUIRED);
  return caller.accountId;
}

/** The multipart fields are read by busboy in the handler, so they are parsed here, once (the JSON inputs by the declaration). */
function uploadFieldsOf(fields: unknown): z.infer<typeof uploadFields> {
  const parsed = uploadFields.safeParse(fields);
  if (!parsed.success) throw new ApiError(ErrorCode.INVALID_INPUT, { message: parsed.error.issues[0]?.message ?? 'Invalid request.' });
  return parsed.data;
}

const idOf = (req: Request) => inputOf(req, datasetId).id;

/** What the sheet handlers use: the sheets' store and table, the runners for their SQL, the upload cap. */
export interface SheetHandlerDeps extends SheetWriteDeps, SheetQueryDeps {
  readonly config: Pick<ApiConfig, 'SHEETS_MAX_UPLOAD_MB'>;
}

async function withUpload<T>(req: Request, services: Pick<SheetHandlerDeps, 'config'>, work: (upload: ReceivedUpload & { file: NonNullable<ReceivedUpload['file']> }) => Promise<T>): Promise<T> {
  const upload = await receiveUpload(req, services.config.SHEETS_MAX_UPLOAD_MB * 1024 * 1024);
  try {
    if (!upload.file) throw new ApiError(ErrorCode.INVALID_INPUT, { message: 'Include the file as a multipart part named "file".' });
    return await work({ ...upload, file: upload.file });
  } finally {
    await upload.discard();
  }
}

export function createHandler(services: SheetHandlerDeps): RequestHandler {
  return async function createDataset(req, res) {
    const accountId = accountOf(req);
    const row = await withUpload(req, services, ({ fields, file }) => createSheet(services, accountId, { file, ...uploadFieldsOf(fields) }));
    res.status(202).json(createdResponse.parse({ id: row.id, slug: row.slug, status: 'processing' }));
  };
}

export function replaceHandler(services: SheetHandlerDeps): RequestHandler {
  return async function replaceDatasetFile(req, res) {
    const accountId = accountOf(req);
    const row = await withUpload(req, services, ({ file }) => replaceSheetFile(services, accountId, idOf(req), file));
    res.status(202).json(createdResponse.parse({ id: row.id, slug: row.slug, status: 'processing' }));
  };
}

export function listHandler(services: SheetHandlerDeps): RequestHandler {
  return async function listDatasetsRoute(req, res) {
    const accountId = accountOf(req);
    const [rows, { quota, usage }] = await Promise.all([listDatasets(services.db, accountId), sheetQuotaOf(services, accountId)]);
    const limits = { sheets: usage.sheets, max_sheets: quota.sheets, bytes: usage.bytes, max_bytes: quota.bytes };
    res.json(listResponse.parse({ status: 'success', datasets: rows.map(toRecord), quota: limits }));
  };
}

export function showHandler(services: SheetHandlerDeps): RequestHandler {
  return async function showDataset(req, res) {
    res.json(datasetRecordSchema.parse(toRecord(await ownedSheet(services, accountOf(req), idOf(req)))));
  };
}

export function deleteHandler(services: SheetHandlerDeps): RequestHandler {
  return async function deleteDataset(req, res) {
    await deleteSheet(services, accountOf(req), idOf(req));
    res.status(204).end();
  };
}

export function searchHandler(services: SheetHandlerDeps): RequestHandler {
  return async function searchDataset(req, res) {
    const accountId = accountOf(req);
    const { q } = inputOf(req, searchQuery);
    const result = await searchSheet(services, accountId, idOf(req), q);
    res.json(searchResponse.parse({ status: 'success', ...result }));
  };
}

export function queryHandler(services: SheetHandlerDeps): RequestHandler {
  return async function queryDataset(req, res) {
    const caller = callerOf(req);
    if (caller.kind !== 'account') throw new ApiError(ErrorCode.SHEET_AUTH_REQUIRED);
    const { sql } = inputOf(req, sheetQueryBody);
    const result = await querySheet(services, caller, idOf(req), sql);
    res.json(queryResponse.parse({ status: 'success', ...result }));
  };
}
