/**
 * GET and HEAD of the export files (SPEC export routes; DECISIONS §3, §7). The bytes stream from
 * the object store with the range forwarded. A file is charged once per account and file version
 * per 24 h window, by the first request that carries the file's bytes; HEAD, 304, 416 and further
 * requests in the window are free and do not count toward the daily cap. Every request that carries
 * bytes is a delivery under the window's charge: the charge is refunded only when none of them
 * completed and none is in flight (`billing/billing.ts`, rule 2).
 */
import type { Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import type { Delivery, Payer } from '../../billing/billing.ts';
import { exportWindow } from '../../billing/charge-keys.ts';
import { deliverCharged, setCreditHeaders } from '../../billing/http.ts';
import { EXPORT_WINDOW_MS, exportPriceMicro } from '../../billing/prices.ts';
import { ApiError } from '../../errors/api-error.ts';
import { ErrorCode } from '../../errors/codes.ts';
import { consumeDailyCap, dailyCapRemaining } from '../../middleware/daily-cap/index.ts';
import { decideRange } from '../../objects/range.ts';
import { etagPreconditionsPass, sendObject } from '../../objects/send-object.ts';
import type { Services } from '../../services.ts';
import { sqlCallerOf } from '../query/settle.ts';
import { resolveExport, type ResolvedExport } from './resolve.ts';

const exportParams = z.object({ format: z.string().optional(), table: z.string().optional(), version: z.string().optional() });

export function exportHandler(services: Services): RequestHandler {
  return async function getExport(req, res) {
    const params = exportParams.safeParse(req.query);
    if (!params.success) throw new ApiError(ErrorCode.INVALID_INPUT, { message: 'format, table and version are single text values.' });
    const target = await resolveExport(services.store, { name: String(req.params.name), ...params.data });
    const delivery = await bill(services, req, res, sqlCallerOf(req), target);
    res.setHeader('X-Service-Success', 'true');
    res.setHeader('X-Service-Message', `Download of ${target.downloadName} (export ${target.version}) succeeded.`);
    const outcome = await sendObject(req, res, {
      store: services.store,
      key: target.file.key,
      contentType: target.file.content_type,
      downloadName: target.downloadName,
    }).catch(async (error: unknown) => {
      if (res.headersSent) throw error;
      if (delivery) setCreditHeaders(res, await delivery.abandon());
      throw new ApiError(ErrorCode.EXPORT_UNAVAILABLE, {}, { 'Retry-After': '5' });
    });
    if (outcome.status === 404) {
      if (delivery) setCreditHeaders(res, await delivery.abandon());
      throw new ApiError(ErrorCode.EXPORT_NOT_FOUND, { message: `Export ${target.downloadName} is gone; retry.` });
    }
  };
}

/** Charges a download that carries bytes when its window is not paid yet (402 before any byte). */
async function bill(services: Services, req: Request, res: Response, payer: Payer, target: ResolvedExport): Promise<Delivery | undefined> {
  const capOptions = services.guards.exportCapOptions;
  if (!carriesBytes(req, target)) {
    setCreditHeaders(res, { chargedMicro: 0, balanceMicro: await services.billing.balance(payer.accountId) });
    res.setHeader('RateLimit-Remaining', String(await dailyCapRemaining(capOptions, payer.accountId)));
    return undefined;
  }
  const delivery = await services.billing.deliverWindow(payer, exportWindow(payer.accountId, target.file.key, EXPORT_WINDOW_MS), {
    costMicro: exportPriceMicro(target.priceKind, payer.tier),
    carriesBytes: true,
    priceClass: 'export',
    beforeCharge: () => consumeDailyCap(capOptions, req, res),
  });
  if (!delivery.settlement.chargedMicro) res.setHeader('RateLimit-Remaining', String(await dailyCapRemaining(capOptions, payer.accountId)));
  setCreditHeaders(res, delivery.settlement);
  deliverCharged(res, delivery);
  return delivery;
}

/**
 * Whether this request would send file bytes: a GET whose ETag preconditions pass (not a 304 or
 * 412) and whose range is satisfiable (not a 416). A date precondition that fails is only known
 * once the object's Last-Modified is read: that answer carries no body, so its delivery is
 * abandoned and the charge refunded unless another download completed.
 */
function carriesBytes(req: Request, target: ResolvedExport): boolean {
  if (req.method !== 'GET') return false;
  if (!etagPreconditionsPass(req, target.file.etag)) return false;
  return decideRange(req.get('range'), target.file.size).kind !== 'unsatisfiable';
}
