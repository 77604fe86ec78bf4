/**
 * GET and HEAD of the export files (SPEC export routes; DECISIONS §3, §7). The bytes stream from
 * the object store with the range forwarded. The charge is made once per account, file version and
 * UTC day, by the first request that carries the file's bytes; HEAD, 304, 416 and further ranges
 * in the window are free and do not count toward the daily cap. A download that breaks part-way is
 * refunded, and the refund moves the window's charge key on (see `windowCharge`).
 */
import type { Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import { ApiError } from '../../errors/api-error.ts';
import { ErrorCode } from '../../errors/codes.ts';
import { consumeDailyCap, dailyCapRemaining } from '../../middleware/daily-cap/index.ts';
import { formatUsd } from '../../money.ts';
import { decideRange } from '../../objects/range.ts';
import { deliveredBody, etagPreconditionsPass, sendObject } from '../../objects/send-object.ts';
import { utcDay } from '../../quota.ts';
import type { Services } from '../../services.ts';
import { windowCharge } from '../../sql/charge-key.ts';
import { sqlCallerOf } from '../query/settle.ts';
import { exportPriceMicro } from './pricing.ts';
import { resolveExport, type ResolvedExport } from './resolve.ts';

const exportParams = z.object({ format: z.string().optional(), table: z.string().optional(), version: z.string().optional() });

export function exportHandler(services: Services): RequestHandler {
  return async function getExport(req, res) {
    const params = exportParams.safeParse(req.query);
    if (!params.success) throw new ApiError(ErrorCode.INVALID_INPUT, { message: 'format, table and version are single text values.' });
    const target = await resolveExport(services.store, { name: String(req.params.name), ...params.data });
    const chargedKey = await bill(services, req, res, target);
    res.setHeader('X-Service-Success', 'true');
    res.setHeader('X-Service-Message', `Download of ${target.downloadName} (export ${target.version}) succeeded.`);
    const outcome = await sendObject(req, res, {
      store: services.store,
      key: target.file.key,
      contentType: target.file.content_type,
      downloadName: target.downloadName,
    }).catch(async () => {
      if (chargedKey) await services.meter.refund(chargedKey);
      throw new ApiError(ErrorCode.EXPORT_UNAVAILABLE, {}, { 'Retry-After': '5' });
    });
    if (!deliveredBody(outcome) && chargedKey) await services.meter.refund(chargedKey);
    if (outcome.status === 404) throw new ApiError(ErrorCode.EXPORT_NOT_FOUND, { message: `Export ${target.downloadName} is gone; retry.` });
  };
}

/** Charges a newly billed download up front (402 before any byte); returns its key, if charged. */
async function bill(services: Services, req: Request, res: Response, target: ResolvedExport): Promise<string | undefined> {
  const caller = sqlCallerOf(req);
  const base = `export:${caller.accountId}:${target.file.key}:${utcDay(new Date())}`;
  const window = await windowCharge(services.db, caller.accountId, base);
  if (!window.charged && carriesBytes(req, target)) {
    await consumeDailyCap(services.guards.exportCapOptions, req, res);
    const settlement = await services.meter.settle(req, res, { costMicro: exportPriceMicro(target.priceKind, caller.tier), idempotencyKey: window.key, priceClass: 'export' });
    return settlement.chargedMicro ? settlement.idempotencyKey : undefined;
  }
  const remaining = await dailyCapRemaining(services.guards.exportCapOptions, caller.accountId);
  res.setHeader('RateLimit-Remaining', String(remaining));
  res.setHeader('X-Credit-Cost', '0');
  res.setHeader('X-Credits-Remaining', formatUsd(await services.accounts.balance(caller.accountId)));
  return undefined;
}

/** Whether this request would send file bytes: a GET that is neither a 304 nor a 416. */
function carriesBytes(req: Request, target: ResolvedExport): boolean {
  if (req.method !== 'GET') return false;
  if (!etagPreconditionsPass(req, target.file.etag)) return false;
  return decideRange(req.get('range'), target.file.size).kind !== 'unsatisfiable';
}
