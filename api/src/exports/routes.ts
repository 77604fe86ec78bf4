import { z } from 'zod';
import { ErrorCode } from '../errors/codes.ts';
import { contentRange, creditHeaders, fileHeaders, fileRequestHeaders } from '../openapi/headers.ts';
import { type RouteDeclaration, declareRoute } from '../routes/declare.ts';
import type { Guards } from '../middleware/guards.ts';
import { type ExportHandlerDeps, exportHandler } from './handler.ts';
import { exportPath, exportQuery } from './schema.ts';

const file = {
  'application/vnd.apache.parquet': z.string().meta({ format: 'binary' }),
  'text/csv': z.string().meta({ format: 'binary' }),
  'application/zip': z.string().meta({ format: 'binary' }),
  'application/octet-stream': z.string().meta({ format: 'binary' }).describe('service.db, a DuckDB database'),
};
const headers = {
  ...creditHeaders,
  ...fileHeaders,
  'Content-Disposition': z.string().describe('`attachment; filename="…"`'),
  'X-Service-Success': z.literal('true'),
  'X-Service-Message': z.string().describe('Says which file and export version was sent.'),
  'RateLimit-Remaining': z.string().regex(/^\d+$/).describe('Export/SQL requests left today.'),
};

/** What the export route uses. */
export type ExportDeps = ExportHandlerDeps & { readonly guards: Pick<Guards, 'requireKey'> };

/** SPEC export routes: the three bulk files and `/{source}`, one handler; HEAD via Express's GET. */
export const exportRoutes: readonly RouteDeclaration<ExportDeps>[] = [
  declareRoute<ExportDeps>({
    method: 'get',
    visibility: 'public',
    path: '/api/v1/export/:name',
    style: 'flat',
    queryToken: true,
    doc: {
      path: '/api/v1/export/{name}',
      operationId: 'downloadExport',
      summary: 'Download a bulk export file or one source',
      description:
        'Streams a file of the current export (or a pinned version) with ranges, a stable ETag and Content-Length, so DuckDB ' +
        'and other Parquet readers can range-read it. Bulk files cost $1.00, one source $0.10 (Pro 20% less), charged once ' +
        'per account and file version per 24 h from the charge, by the first GET that carries bytes; HEAD, 304, 412, 416 and ' +
        'further requests in the window are free, even at a zero balance.',
      tag: 'Exports',
      auth: 'key',
      params: exportPath,
      query: exportQuery,
      headers: fileRequestHeaders,
      head: true,
      responses: {
        200: { description: 'The file.', content: file, headers },
        206: { description: 'The requested byte range.', content: file, headers: { ...headers, ...contentRange } },
        304: { description: 'Unchanged since the ETag in If-None-Match or the date in If-Modified-Since; free.', headers },
        412: { description: 'An If-Match or If-Unmodified-Since precondition failed; free.', headers },
        416: { description: 'The range lies outside the file; free.', headers: { ...headers, ...contentRange } },
      },
      errors: [
        ErrorCode.INVALID_INPUT,
        ErrorCode.AUTH_REQUIRED,
        ErrorCode.EMAIL_NOT_VERIFIED,
        ErrorCode.INSUFFICIENT_CREDIT,
        ErrorCode.EXPORT_NOT_FOUND,
        ErrorCode.EXPORT_LIMIT_EXCEEDED,
        ErrorCode.EXPORT_UNAVAILABLE,
      ],
    },
    // No up-front credit check: only a download that creates a new charge needs credit (DECISIONS §3).
    guards: (s) => [s.guards.requireKey],
    handler: (s) => exportHandler(s),
  }),
];
