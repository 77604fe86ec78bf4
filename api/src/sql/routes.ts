import { z } from 'zod';
import { ErrorCode } from '../errors/codes.ts';
import { contentRange, dailyCapHeaders, fileHeaders, fileRequestHeaders, resultHeaders } from '../openapi/headers.ts';
import type { RouteDoc } from '../routes/types.ts';
import { API_V1, type RouteDeclaration, declareRoute } from '../routes/declare.ts';
import type { Guards } from '../middleware/guards.ts';
import { type SqlFileDeps, fileQueryHandler, postQueryHandler } from './handlers.ts';
import { queryBody, queryParams, queryResponse } from './schema.ts';

const SQL_ERRORS = [
  ErrorCode.AUTH_REQUIRED,
  ErrorCode.EMAIL_NOT_VERIFIED,
  ErrorCode.INSUFFICIENT_CREDIT,
  ErrorCode.QUERY_INVALID,
  ErrorCode.DATASET_FORBIDDEN,
  ErrorCode.QUERY_TIMEOUT,
  ErrorCode.QUERY_RESULT_TOO_LARGE,
  ErrorCode.EXPORT_LIMIT_EXCEEDED,
  ErrorCode.QUERY_BUSY,
  ErrorCode.QUERY_BACKEND_UNAVAILABLE,
  ErrorCode.RUNNER_BUDGET_EXCEEDED,
  ErrorCode.QUERY_CONCURRENCY_LIMITED,
];

const RULES =
  'One SELECT (at most 10,000 characters) over the export tables and the caller\'s ready connected sheets. ' +
  'The result is capped at 1,000 rows and charged per row at each row\'s source price; the same query ' +
  'within 5 minutes is an uncharged re-read. Counts toward the 1,000-per-day export/SQL limit.';

const postDoc: RouteDoc = {
  path: '/query',
  operationId: 'runQuery',
  summary: 'Run one SELECT and get JSON',
  description: RULES,
  tag: 'SQL',
  auth: 'key',
  body: { contentType: 'application/json', schema: queryBody },
  invalidInput: ErrorCode.QUERY_INVALID,
  responses: {
    200: { description: 'The result.', content: { 'application/json': queryResponse }, headers: { ...resultHeaders, ...dailyCapHeaders } },
  },
  errors: SQL_ERRORS,
};

function fileDoc(format: 'csv' | 'parquet'): RouteDoc {
  const mediaType = format === 'csv' ? 'text/csv' : 'application/vnd.apache.parquet';
  const file = { [mediaType]: z.string().meta({ format: 'binary' }) };
  const headers = { ...resultHeaders, ...fileHeaders, 'RateLimit-Remaining': dailyCapHeaders['RateLimit-Remaining'].optional() };
  return {
    path: `/query.${format}`,
    operationId: format === 'csv' ? 'queryCsv' : 'queryParquet',
    summary: `Run one SELECT and get ${format === 'csv' ? 'CSV with a header row' : 'a Parquet file'}`,
    description: `${RULES} DuckDB reads the URL directly: a HEAD, then range GETs, all of the same stored result.`,
    tag: 'SQL',
    auth: 'key',
    query: queryParams,
    headers: fileRequestHeaders,
    invalidInput: ErrorCode.QUERY_INVALID,
    head: true,
    responses: {
      200: { description: 'The result file.', content: file, headers },
      206: { description: 'The requested byte range of the result.', content: file, headers: { ...headers, ...contentRange } },
      304: { description: 'The result has not changed since the ETag in If-None-Match.', headers },
      416: { description: 'The range lies outside the result.', headers: { ...headers, ...contentRange } },
    },
    errors: SQL_ERRORS,
  };
}

/** What the SQL routes use. */
export type SqlDeps = SqlFileDeps & { readonly guards: Pick<Guards, 'requireKey'> };

/** SPEC: the SQL routes. Express answers HEAD with the GET handler; HEAD runs and charges like GET. */
export const queryRoutes: readonly RouteDeclaration<SqlDeps>[] = [
  declareRoute<SqlDeps>({
    method: 'post',
    visibility: 'public',
    base: API_V1,
    path: '/query',
    // The dashboard's SQL console runs it behind its session.
    alsoBehindSession: true,
    style: 'flat',
    burstInHandler: true,
    doc: postDoc,
    guards: (s) => [s.guards.requireKey],
    handler: (s) => postQueryHandler(s),
  }),
  declareRoute<SqlDeps>({
    method: 'get',
    visibility: 'public',
    base: API_V1,
    path: '/query.csv',
    style: 'flat',
    burstInHandler: true,
    queryToken: true,
    doc: fileDoc('csv'),
    guards: (s) => [s.guards.requireKey],
    handler: (s) => fileQueryHandler(s, 'csv'),
  }),
  declareRoute<SqlDeps>({
    method: 'get',
    visibility: 'public',
    base: API_V1,
    path: '/query.parquet',
    style: 'flat',
    burstInHandler: true,
    queryToken: true,
    doc: fileDoc('parquet'),
    guards: (s) => [s.guards.requireKey],
    handler: (s) => fileQueryHandler(s, 'parquet'),
  }),
];
