/**
 * SQL route handlers: they translate HTTP to `runSql` and back, nothing more.
 */
import type { Request, RequestHandler, Response } from 'express';
import type { ResultFormat } from '@uda/shared/runner-contract';
import { ApiError } from '../../errors/api-error.ts';
import { ErrorCode } from '../../errors/codes.ts';
import { consumeDailyCap } from '../../middleware/daily-cap/index.ts';
import { sendObject } from '../../objects/send-object.ts';
import type { Services } from '../../services.ts';
import { runSql, type RunSqlRequest, type SqlResult } from '../../sql/run-sql.ts';
import { backendUnavailable } from '../../sql/runner-errors.ts';
import { datasetList, queryBody, queryParams, queryResponse } from './schema.ts';
import { settleSql, sqlCallerOf } from './settle.ts';

const CONTENT_TYPES = { csv: 'text/csv; charset=utf-8', parquet: 'application/vnd.apache.parquet' } as const;

function run(services: Services, req: Request, res: Response, request: RunSqlRequest): Promise<SqlResult> {
  // Only a request that executes a query counts toward the daily cap (DECISIONS §4).
  const beforeExecute = () => consumeDailyCap(services.guards.exportCapOptions, req, res);
  return runSql(services, sqlCallerOf(req), request, { beforeExecute });
}

/** POST /api/v1/query */
export function postQueryHandler(services: Services): RequestHandler {
  return async function postQuery(req, res) {
    const body = queryBody.safeParse(req.body ?? {});
    if (!body.success) throw new ApiError(ErrorCode.QUERY_INVALID, { message: 'Send a JSON body with `sql` (string) and optional `datasetIds` (list).' });
    const datasetIds = (body.data.datasetIds ?? []).map(String);
    const result = await run(services, req, res, { sql: body.data.sql, datasetIds, format: 'json' });
    await settleSql(services, req, res, result);
    const rows = [...(result.rows ?? [])];
    res.json(
      queryResponse.parse({
        status: 'success',
        row_count: result.meta.rowCount,
        rows,
        columns: result.meta.columns,
        truncated: result.meta.truncated,
        sql_executed: result.meta.sqlExecuted,
      }),
    );
  };
}

/** GET and HEAD /api/v1/query.csv and /api/v1/query.parquet: a static-file answer of the stored result. */
export function fileQueryHandler(services: Services, format: Exclude<ResultFormat, 'json'>): RequestHandler {
  return async function getQueryFile(req, res) {
    const parsed = queryParams.safeParse(req.query);
    if (!parsed.success) throw new ApiError(ErrorCode.QUERY_INVALID, { message: 'Send `sql` (and optional `datasets`) once each as query parameters.' });
    const params = parsed.data;
    const result = await run(services, req, res, { sql: params.sql, datasetIds: datasetList(params.datasets), format });
    const object = result.meta.objects[format];
    if (!object) throw new ApiError(ErrorCode.INTERNAL_ERROR);
    const settlement = await settleSql(services, req, res, result);
    const outcome = await sendObject(req, res, { store: services.store, key: object.key, contentType: CONTENT_TYPES[format], downloadName: `query.${format}` }).catch(
      async (error: unknown) => {
        // The store failed before anything was sent: undo the charge and say so.
        if (settlement.chargedMicro) await services.meter.refund(settlement.idempotencyKey);
        if (res.headersSent) throw error;
        throw backendUnavailable();
      },
    );
    // SPEC credits §5: a download that breaks part-way is refunded (the next request charges again).
    const broken = outcome.status === 404 || !outcome.complete;
    if (broken && settlement.chargedMicro) await services.meter.refund(settlement.idempotencyKey);
    if (outcome.status === 404) throw backendUnavailable();
  };
}
