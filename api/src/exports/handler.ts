/**
 * GET and HEAD of the export files (SPEC export routes; DECISIONS §3, §7). The bytes stream from
 * the object store with the range forwarded. A file is charged once per account and file version
 * per 24 h window, by the first request that carries the file's bytes; HEAD, 304, 412, 416 and further
 * requests in the window are free and do not count toward the daily cap. Every request that carries
 * bytes is a delivery under the window's charge: the charge is refunded only when none of them
 * completed and none is in flight (`billing/index.ts`, rule 2), and only while the distinct bytes
 * the broken ones delivered stay under half the file (rule 8).
 */
import type { Request, RequestHandler, Response } from 'express';
import type { ObjectStore } from '@uda/shared/object-store';
import { type Billing, deliverCharged, type Delivery, exportWindow, type Payer, setCreditHeaders } from '../billing/index.ts';
import { EXPORT_WINDOW_MS, exportPriceMicro } from '../prices.ts';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import { consumeDailyCap, dailyCapRemaining } from '../middleware/daily-cap/index.ts';
import { sendObject, wouldSendBody } from '../objects/send-object.ts';
import type { Metrics } from '../metrics.ts';
import type { Guards } from '../middleware/guards.ts';
import type { DownloadCounts } from '../objects/download-counts.ts';
import type { ObjectCache } from '../objects/object-cache.ts';
import type { Manifests } from '../sql/export-version.ts';
import { sqlCallerOf } from '../sql/settle.ts';
import { inputOf } from '../routes/validate.ts';
import { resolveExport, type ResolvedExport } from './resolve.ts';
import { exportPath, exportQuery } from './schema.ts';

/** What serving an export file uses. */
export interface ExportHandlerDeps {
  readonly manifests: Manifests;
  readonly store: ObjectStore;
  readonly objectCache: ObjectCache;
  readonly downloads: DownloadCounts;
  readonly metrics: Pick<Metrics, 'exportBytes'>;
  readonly billing: Pick<Billing, 'balance' | 'deliverWindow'>;
  readonly guards: Pick<Guards, 'exportCapOptions'>;
}

export function exportHandler(services: ExportHandlerDeps): RequestHandler {
  return async function getExport(req, res) {
    const { name } = inputOf(req, exportPath);
    const target = await resolveExport(services.manifests, { name, ...inputOf(req, exportQuery) });
    const info = await services.store.head(target.file.key).catch(() => {
      throw new ApiError(ErrorCode.EXPORT_UNAVAILABLE, {}, { 'Retry-After': '5' });
    });
    if (!info) throw new ApiError(ErrorCode.EXPORT_NOT_FOUND, { message: `Export ${target.downloadName} is gone; retry.` });
    const carriesBytes = wouldSendBody(req, info);
    const delivery = await bill(services, req, res, sqlCallerOf(req), target, info.size, carriesBytes);
    // The warm-up copies the most downloaded files of a new version first.
    if (carriesBytes) services.downloads.count(target.file.name);
    res.setHeader('X-Service-Success', 'true');
    res.setHeader('X-Service-Message', `Download of ${target.downloadName} (export ${target.version}) succeeded.`);
    const outcome = await sendObject(req, res, {
      store: services.store,
      cache: services.objectCache,
      key: target.file.key,
      info,
      contentType: target.file.content_type,
      downloadName: target.downloadName,
      sentBytes: services.metrics.exportBytes,
      // Bytes delivered count (DECISIONS §3): a download that breaks says how much of the file it gave.
      onSent: delivery ? (span) => delivery.sent(span) : undefined,
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
async function bill(services: ExportHandlerDeps, req: Request, res: Response, payer: Payer, target: ResolvedExport, sizeBytes: number, carriesBytes: boolean): Promise<Delivery | undefined> {
  const capOptions = services.guards.exportCapOptions;
  if (!carriesBytes) {
    setCreditHeaders(res, { chargedMicro: 0, balanceMicro: await services.billing.balance(payer.accountId) });
    res.setHeader('RateLimit-Remaining', String(await dailyCapRemaining(capOptions, payer.accountId)));
    return undefined;
  }
  const delivery = await services.billing.deliverWindow(payer, exportWindow(payer.accountId, target.file.key, EXPORT_WINDOW_MS), {
    costMicro: exportPriceMicro(target.priceKind, payer.tier),
    carriesBytes: true,
    sizeBytes,
    priceClass: 'export',
    beforeCharge: () => consumeDailyCap(capOptions, req, res),
  });
  if (!delivery.settlement.chargedMicro) res.setHeader('RateLimit-Remaining', String(await dailyCapRemaining(capOptions, payer.accountId)));
  setCreditHeaders(res, delivery.settlement);
  deliverCharged(res, delivery);
  return delivery;
}
