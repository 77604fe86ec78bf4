/**
 * SQL route handlers: they translate HTTP to `runSql` and back, nothing more. Every response is a
 * delivery under the result's charge (`deliverCharged`): one that fails or breaks part-way is
 * refunded unless another delivery of the same result completed.
 */
import type { RequestHandler } from 'express';
import type { ResultFormat } from '@uda/shared/runner-contract';
import { deliverCharged, setCreditHeaders } from '../billing/index.ts';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import { sendObject } from '../objects/send-object.ts';
import type { Metrics } from '../metrics.ts';
import type { ObjectCache } from '../objects/object-cache.ts';
import { sqlResultJson } from './result-json.ts';
import { runSql, type SqlServices } from './run-sql.ts';
import { backendUnavailable } from './runner-errors.ts';
import { inputOf } from '../routes/validate.ts';
import { datasetList, queryBody, queryParams } from './schema.ts';
import { deliverSql, type SqlBillingDeps, sqlCallerOf, sqlHooks } from './settle.ts';

const CONTENT_TYPES = { csv: 'text/csv; charset=utf-8', parquet: 'application/vnd.apache.parquet' } as const;

/** What the SQL handlers use: running the query, its limits and billing. */
export type SqlHandlerDeps = SqlServices & SqlBillingDeps;

/** What a file result's answer also uses: the pod's object cache and the bytes counter. */
export type SqlFileDeps = SqlHandlerDeps & { readonly objectCache: ObjectCache; readonly metrics: Pick<Metrics, 'exportBytes'> };

/** POST /api/v1/query */
export function postQueryHandler(services: SqlHandlerDeps): RequestHandler {
  return async function postQuery(req, res) {
    const body = inputOf(req, queryBody);
    const datasetIds = (body.datasetIds ?? []).map(String);
    const result = await runSql(services, sqlCallerOf(req), { sql: body.sql, datasetIds, format: 'json' }, sqlHooks(services, req, res));
    const delivery = await deliverSql(services, req, res, result);
    deliverCharged(res, delivery);
    // The `queryResponse` shape, with the rows passed through from the runner as bytes.
    res.type('application/json; charset=utf-8').send(sqlResultJson(result, { status: 'success' }));
  };
}

/** GET and HEAD /api/v1/query.csv and /api/v1/query.parquet: a static-file answer of the stored result. */
export function fileQueryHandler(services: SqlFileDeps, format: Exclude<ResultFormat, 'json'>): RequestHandler {
  return async function getQueryFile(req, res) {
    const params = inputOf(req, queryParams);
    const result = await runSql(services, sqlCallerOf(req), { sql: params.sql, datasetIds: datasetList(params.datasets), format }, sqlHooks(services, req, res));
    const object = result.meta.objects[format];
    if (!object) throw new ApiError(ErrorCode.INTERNAL_ERROR);
    const delivery = await deliverSql(services, req, res, result);
    deliverCharged(res, delivery);
    const outcome = await sendObject(req, res, {
      store: services.store,
      cache: services.objectCache,
      key: object.key,
      contentType: CONTENT_TYPES[format],
      downloadName: `query.${format}`,
      sentBytes: services.metrics.exportBytes,
    }).catch(async (error: unknown) => {
      if (res.headersSent) throw error;
      // The store failed before anything was sent: the charge goes back, and the error says so.
      setCreditHeaders(res, await delivery.abandon());
      throw backendUnavailable();
    });
    if (outcome.status === 404) {
      setCreditHeaders(res, await delivery.abandon());
      throw backendUnavailable();
    }
  };
}
