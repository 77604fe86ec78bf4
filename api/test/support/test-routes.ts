/**
 * Test-only routes that plug the reusable gateway pieces together the way the product routes will:
 * a metered lookup (anonymous allowance, lookup envelope), a key-required export (daily cap, flat
 * errors) and a connected-sheet route (sheet 401 and cap). Mounted through `extraRoutes`.
 */
import type { RequestHandler } from 'express';
import { ApiError } from '../../src/errors/api-error.ts';
import { ErrorCode } from '../../src/errors/codes.ts';
import { deliverCharged, payerOf, setCreditHeaders } from '../../src/billing/index.ts';
import { priceMicro } from '../../src/prices.ts';
import { callerOf } from '../../src/request-context.ts';
import type { RouteDef } from '../../src/routes/types.ts';
import type { Services } from '../../src/services.ts';

/** `?rows=N` rows of an open source; `?fail=400|500` fails instead; `?cls=encyclopedia`. */
function lookupHandler({ billing }: Services): RequestHandler {
  return async function testLookup(req, res) {
    if (req.query.fail === '400') throw new ApiError(ErrorCode.INVALID_INPUT, { message: 'Unsupported source "nope".' });
    if (req.query.fail === '500') throw new Error('secret internal detail: connection string postgres://x');
    const rows = Number(req.query.rows ?? 1);
    const priceClass = req.query.cls === 'encyclopedia' ? 'encyclopedia' : 'open';
    const payer = payerOf(req);
    if (payer) {
      const costMicro = priceMicro(priceClass, payer.tier, rows);
      const breakdown = [{ source: 'gutenberg', rows, costPerRowMicro: priceMicro(priceClass, payer.tier, 1), costMicro }];
      const delivery = await billing.deliverOnce(payer, { costMicro, breakdown, requestId: String(res.getHeader('x-request-id')) });
      setCreditHeaders(res, delivery.settlement);
      deliverCharged(res, delivery);
    }
    res.json({ status: 'success', account_state: payer ? 'authenticated' : 'anonymous', data: { rows } });
  };
}

function exportHandler({ billing }: Services): RequestHandler {
  return async function testExport(req, res) {
    if (req.query.fail === '500') throw new Error('secret internal detail');
    const payer = payerOf(req);
    if (payer) setCreditHeaders(res, (await billing.deliverOnce(payer, { costMicro: Number(req.query.cost ?? 100_000) })).settlement);
    res.json({ status: 'success' });
  };
}

export function testRoutes(services: Services): RouteDef[] {
  const { guards } = services;
  return [
    {
      method: 'get',
      path: '/test/lookup/:q',
      style: 'lookup',
      queryToken: true,
      handlers: [guards.anonymousLimit, guards.requireCredit, lookupHandler(services)],
    },
    {
      method: 'get',
      path: '/test/export',
      style: 'flat',
      queryToken: true,
      handlers: [guards.requireKey, guards.exportCap, guards.requireCredit, exportHandler(services)],
    },
    {
      method: 'get',
      path: '/test/sheet',
      style: 'flat',
      handlers: [
        guards.requireSheetKey,
        guards.sheetCap,
        (_req, res) => {
          res.json({ status: 'success', row_count: 0, rows: [] });
        },
      ],
    },
    {
      method: 'get',
      path: '/test/header-only',
      style: 'lookup',
      handlers: [
        (req, res) => {
          res.json({ account_state: callerOf(req).kind === 'account' ? 'authenticated' : 'anonymous' });
        },
      ],
    },
  ];
}
