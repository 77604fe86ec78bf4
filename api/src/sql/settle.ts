/**
 * Billing and the six result headers of the SQL routes (SPEC Resources "Query result headers";
 * DECISIONS §3, §6). Every response is a delivery under the result's window charge: the first one
 * charges, the rest report 0 and `X-Service-Cached: true`. The charge itself is `Billing`'s.
 */
import type { Request, Response } from 'express';
import { type BegunDelivery, type Billing, type Delivery, type PaidSqlRead, payerOf, setCreditHeaders } from '../billing/index.ts';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import { type RouteGuard, applyGuards } from '../middleware/counters/index.ts';
import { consumeDailyCap } from '../middleware/daily-cap/index.ts';
import type { LimiterBackend } from '../limiter/types.ts';
import type { Guards } from '../middleware/guards.ts';
import type { RunSqlHooks, SqlCaller, SqlResult } from './run-sql.ts';
import { FREE_USAGE, usageHeader } from './usage.ts';

/** What the SQL routes' limits and billing use. */
export interface SqlBillingDeps {
  readonly limiterBackend: LimiterBackend;
  readonly guards: Pick<Guards, 'burst' | 'exportCapOptions'>;
  readonly billing: Billing;
}

export function sqlCallerOf(req: Request): SqlCaller {
  const payer = payerOf(req);
  // requireKey runs first on every SQL route; this guards a mis-registered route.
  if (!payer) throw new ApiError(ErrorCode.AUTH_REQUIRED);
  return payer;
}

/**
 * Before a query runs (never for a stored result): 402 at zero balance, then the daily cap. A
 * result the caller paid for is read first, without them (DECISIONS §4: re-reads do not count).
 */
export function sqlHooks(services: SqlBillingDeps, req: Request, res: Response): RunSqlHooks {
  return {
    signal: clientGone(res),
    takeLimits: () => applyGuards(services.limiterBackend, [services.guards.burst], req, res),
    alreadyPaid: (queryId) => paidWithBurst(services, req, res, queryId),
    beforeExecute: async () => {
      await services.billing.requireCredit(sqlCallerOf(req));
      return consumeDailyCap(services.guards.exportCapOptions, req, res);
    },
  };
}

/**
 * The re-read marker, read in the Redis call that takes the request's burst count (the SQL routes
 * leave it to their handler, `burstInHandler`): one round trip for both. Without the rider's reply
 * (Redis down, a wallet in this process) the marker is read alone, as before.
 */
async function paidWithBurst(services: SqlBillingDeps, req: Request, res: Response, queryId: string): Promise<string | undefined> {
  const caller = sqlCallerOf(req);
  const paid = services.billing.paidSqlRead(caller, queryId);
  let reply: unknown;
  const readMarker: RouteGuard = () => ({
    rider: paid.rider,
    apply: async (answer: unknown) => {
      reply = answer;
    },
  });
  await applyGuards(services.limiterBackend, [services.guards.burst, readMarker], req, res);
  const read = paid.read(reply);
  if (!read) return services.billing.paidSqlResult(caller, queryId);
  const { paidKey, begun } = read;
  if (paidKey !== undefined && begun) keepBegun(req, res, paid, paidKey, begun);
  return paidKey;
}

/** Deliveries a paid re-read's first call began, by request, until `deliverSql` takes them. */
const begunOf = new WeakMap<Request, BegunDelivery>();

/** Keeps `begun` for the response's delivery; one no response took (the request failed first) is ended. */
function keepBegun(req: Request, res: Response, paid: PaidSqlRead, paidKey: string, begun: BegunDelivery): void {
  begunOf.set(req, begun);
  res.once('close', () => {
    if (begunOf.get(req) === begun) void paid.release(paidKey, begun).catch(() => undefined);
  });
}

/** Aborts when the client's connection closes before the answer was sent: its query is then stopped. */
export function clientGone(res: Response): AbortSignal {
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  return gone.signal;
}

/** Charges the window if nobody has yet, and sets the billing headers of this response. */
export async function deliverSql(services: Pick<SqlBillingDeps, 'billing'>, req: Request, res: Response, result: SqlResult): Promise<Delivery> {
  const { usage } = result;
  const begun = begunOf.get(req);
  begunOf.delete(req);
  const delivery = await services.billing.deliverWindow(sqlCallerOf(req), result.window, {
    costMicro: usage.costMicro,
    breakdown: usage.breakdown,
    queryId: result.queryId,
    carriesBytes: req.method !== 'HEAD',
    priceClass: usage.priceClass,
    madeResult: !result.cached,
    ...(result.paidKey !== undefined ? { paidKey: result.paidKey } : {}),
    ...(begun && result.paidKey !== undefined ? { begun } : {}),
  });
  const charged = delivery.settlement.chargedMicro > 0;
  const shown = charged ? usage : FREE_USAGE;
  setCreditHeaders(res, delivery.settlement);
  res.setHeader('X-Service-Cached', String(result.cached && !charged));
  res.setHeader('X-Service-Query-Id', result.queryId);
  res.setHeader('X-Service-Rows-Charged', String(shown.rowsCharged));
  res.setHeader('X-Service-Usage', usageHeader(shown));
  return delivery;
}
