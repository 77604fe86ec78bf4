/**
 * The one HTTP adapter of the billing core: it turns a request into a payer, a settlement into the
 * `X-Credit-Cost` / `X-Credits-Remaining` headers, and a response's end into the end of its delivery.
 */
import type { ServerResponse } from 'node:http';
import type { Request, RequestHandler } from 'express';
import type { LimiterBackend } from '../limiter/types.ts';
import { type GuardHandler, type RiderStep, guardHandler } from '../middleware/counters/index.ts';
import { formatUsd } from '../money.ts';
import { callerOf } from '../request-context.ts';
import type { Billing, Delivery, Hold, Payer, Settlement } from './billing.ts';

/** The paying account, or undefined for an anonymous caller (never charged). */
export function payerOf(req: Request): Payer | undefined {
  const caller = callerOf(req);
  // The key and the route are for the usage log's record only, never for a charge decision.
  return caller.kind === 'account' ? { accountId: caller.accountId, tier: caller.tier, keyId: caller.keyId, route: `${req.method} ${req.baseUrl}${(req.route as { path?: string } | undefined)?.path ?? req.path}` } : undefined;
}

export function setCreditHeaders(res: ServerResponse, settlement: Settlement): void {
  res.setHeader('X-Credit-Cost', formatUsd(settlement.chargedMicro));
  res.setHeader('X-Credits-Remaining', formatUsd(settlement.balanceMicro));
}

/**
 * Ties a delivery to its response (rule 2): a 2xx that went out whole completes it; anything else
 * (a cut connection, an error answer, a SIGTERM that closed the socket) abandons it, which refunds
 * the charge when no other delivery under it completed or is in flight.
 */
export function deliverCharged(res: ServerResponse, delivery: Delivery): void {
  res.once('close', () => {
    const whole = res.writableFinished && res.statusCode >= 200 && res.statusCode < 300;
    void (whole ? delivery.complete() : delivery.abandon()).catch(() => undefined);
  });
}

/** Rule 4 for routes where every request creates a new charge (lookups); HEAD is never billed. */
export function requireCredit(billing: Billing): RequestHandler {
  return async function requireCreditCheck(req, res, next) {
    const payer = payerOf(req);
    if (!payer || req.method === 'HEAD') return next();
    res.setHeader('X-Credits-Remaining', formatUsd(await billing.requireCredit(payer)));
    next();
  };
}

/** The hold a request made in its counter call (`holdCredit`), until its charge. */
const holds = new WeakMap<Request, Hold>();

export function holdOf(req: Request): Hold | undefined {
  return holds.get(req);
}

/**
 * Rule 4 for lookups, with the hold (DECISIONS §3 "Holds"): in the request's counter call, hold
 * `maxCostOf` (its row limit at its price) from the wallet. Held, the balance is known to be
 * positive; not held (a short or closed wallet, Redis down, the embedded wallet's own step), the
 * usual up-front 402 check runs. A request that ends without its charge releases the whole hold.
 */
export function holdCredit(options: { billing: Billing; backend: LimiterBackend; maxCostOf: (req: Request, payer: Payer) => number }): GuardHandler {
  const { billing, maxCostOf } = options;
  return guardHandler(options.backend, function creditHoldStep(req, res) {
    const payer = payerOf(req);
    if (!payer || req.method === 'HEAD') return undefined;
    const plan = billing.planHold(payer, maxCostOf(req, payer));
    const step: RiderStep = {
      rider: plan.rider,
      async apply(reply, refused) {
        // Refused by a limit: the rider held nothing, but its reply says how the releases it carried went.
        if (refused) return void (plan.rider && (await plan.made(reply)));
        const hold = await plan.made(reply);
        if (!hold) return void res.setHeader('X-Credits-Remaining', formatUsd(await billing.requireCredit(payer)));
        holds.set(req, hold);
        res.setHeader('X-Credits-Remaining', formatUsd(hold.balanceMicro));
        res.once('close', () => void billing.releaseHold(hold).catch(() => undefined));
      },
    };
    return step;
  });
}
