/**
 * Connected sheets (DECISIONS §8). Every route needs a key (header or `token`), answers keyless
 * callers with the connected-sheet 401, counts toward the 1,000-per-day sheet cap and is never
 * charged (DECISIONS §3).
 */
import type { RequestHandler } from 'express';
import type { z } from 'zod';
import { datasetRecordSchema } from './record.ts';
import { ErrorCode } from '../errors/codes.ts';
import { dailyCapHeaders } from '../openapi/headers.ts';
import type { ResponseDoc, RouteDoc } from '../routes/types.ts';
import { API_V1, type RouteDeclaration, declareRoute } from '../routes/declare.ts';
import type { Guards } from '../middleware/guards.ts';
import { type SheetHandlerDeps, createHandler, deleteHandler, listHandler, queryHandler, replaceHandler, searchHandler, showHandler } from './handlers.ts';
import { createdResponse, datasetId, listResponse, queryResponse, searchQuery, searchResponse, sheetQueryBody, uploadBody } from './schema.ts';

const COMMON_ERRORS = [ErrorCode.SHEET_AUTH_REQUIRED, ErrorCode.SHEET_LIMIT_EXCEEDED];
const OWNED_ERRORS = [...COMMON_ERRORS, ErrorCode.DATASET_NOT_FOUND];

const json = (description: string, schema: z.ZodType): ResponseDoc => ({
  description,
  content: { 'application/json': schema },
  headers: dailyCapHeaders,
});

const doc = (fields: Omit<RouteDoc, 'tag' | 'auth'>): RouteDoc => ({ tag: 'Connected sheets', auth: 'key', ...fields });

/** What the sheet routes use: their handlers' services, the key requirements and the daily sheet cap. */
export type SheetDeps = SheetHandlerDeps & { readonly guards: Pick<Guards, 'requireSheetKey' | 'requireVerifiedSheetKey' | 'sheetCap'> };

/** `verified`: an upload or SQL, which need a verified email (DECISIONS §5 "Email"); reads and deletes do not. */
const route = (method: RouteDeclaration['method'], path: string, spec: RouteDoc, handler: (s: SheetHandlerDeps) => RequestHandler, { verified = false } = {}): RouteDeclaration<SheetDeps> =>
  declareRoute<SheetDeps>({
    method,
    visibility: 'public',
    base: API_V1,
    path,
    // The dashboard's sheets page calls them behind its session.
    alsoBehindSession: true,
    style: 'flat',
    queryToken: true,
    doc: verified ? { ...spec, errors: [...spec.errors, ErrorCode.EMAIL_NOT_VERIFIED] } : spec,
    guards: (s) => [verified ? s.guards.requireVerifiedSheetKey : s.guards.requireSheetKey, s.guards.sheetCap],
    handler,
  });
const VERIFIED = { verified: true };

// The runner's failures, passed through by `sqlFailure`, and a sheet that is not ready (403).
const SHEET_QUERY_ERRORS = [
  ErrorCode.DATASET_FORBIDDEN,
  ErrorCode.QUERY_INVALID,
  ErrorCode.QUERY_TIMEOUT,
  ErrorCode.QUERY_RESULT_TOO_LARGE,
  ErrorCode.QUERY_BUSY,
  ErrorCode.QUERY_BACKEND_UNAVAILABLE,
  ErrorCode.RUNNER_BUDGET_EXCEEDED,
  ErrorCode.QUERY_CONCURRENCY_LIMITED,
];

const upload = { contentType: 'multipart/form-data', schema: uploadBody };
const UPLOAD_ERRORS = [ErrorCode.INVALID_INPUT, ErrorCode.UPLOAD_TOO_LARGE];

export const datasetRoutes: readonly RouteDeclaration<SheetDeps>[] = [
  route(
    'post',
    '/datasets',
    doc({
      path: '/datasets',
      operationId: 'createDataset',
      summary: 'Upload a CSV, TSV, JSON, NDJSON or Parquet file as a connected sheet',
      description: 'The file is ingested in the background; poll the sheet until its status is `ready`.',
      body: upload,
      responses: { 202: json('Accepted; processing.', createdResponse) },
      errors: [...COMMON_ERRORS, ...UPLOAD_ERRORS, ErrorCode.DATASET_CONFLICT],
    }),
    createHandler,
    VERIFIED,
  ),
  route(
    'get',
    '/datasets',
    doc({
      path: '/datasets',
      operationId: 'listDatasets',
      summary: 'List the caller\'s connected sheets',
      responses: { 200: json('The caller\'s sheets.', listResponse) },
      errors: COMMON_ERRORS,
    }),
    listHandler,
  ),
  route(
    'get',
    '/datasets/:id',
    doc({
      path: '/datasets/{id}',
      operationId: 'getDataset',
      summary: 'One connected sheet',
      params: datasetId,
      responses: { 200: json('The sheet record.', datasetRecordSchema) },
      errors: OWNED_ERRORS,
    }),
    showHandler,
  ),
  route(
    'put',
    '/datasets/:id/file',
    doc({
      path: '/datasets/{id}/file',
      operationId: 'replaceDatasetFile',
      summary: 'Replace the file of a connected sheet',
      params: datasetId,
      body: upload,
      responses: { 202: json('Accepted; processing.', createdResponse) },
      errors: [...OWNED_ERRORS, ...UPLOAD_ERRORS, ErrorCode.DATASET_CONFLICT],
    }),
    replaceHandler,
    VERIFIED,
  ),
  route(
    'delete',
    '/datasets/:id',
    doc({
      path: '/datasets/{id}',
      operationId: 'deleteDataset',
      summary: 'Delete a connected sheet',
      params: datasetId,
      responses: { 204: { description: 'Deleted.', headers: dailyCapHeaders } },
      errors: OWNED_ERRORS,
    }),
    deleteHandler,
  ),
  route(
    'get',
    '/datasets/:id/search',
    doc({
      path: '/datasets/{id}/search',
      operationId: 'searchDataset',
      summary: 'Search every column of a connected sheet without SQL',
      params: datasetId,
      query: searchQuery,
      responses: { 200: json('Matching rows: those containing the text first, then those holding every word as typed, by stem or within its typo budget, as the stored lookups match them.', searchResponse) },
      errors: [...OWNED_ERRORS, ErrorCode.INVALID_INPUT, ...SHEET_QUERY_ERRORS],
    }),
    searchHandler,
  ),
  route(
    'post',
    '/datasets/:id/query',
    doc({
      path: '/datasets/{id}/query',
      operationId: 'queryDataset',
      summary: 'Run one SELECT against a connected sheet (its table is `sheet`)',
      params: datasetId,
      body: { contentType: 'application/json', schema: sheetQueryBody },
      responses: { 200: json('The result.', queryResponse) },
      errors: [...OWNED_ERRORS, ErrorCode.INVALID_INPUT, ...SHEET_QUERY_ERRORS],
    }),
    queryHandler,
    VERIFIED,
  ),
];
