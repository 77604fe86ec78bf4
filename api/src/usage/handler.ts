import type { RequestHandler } from 'express';
import { formatUsd } from '../money.ts';
import { dailyCapRemaining } from '../middleware/daily-cap/index.ts';
import { remainingOf } from '../quota.ts';
import { callerOf } from '../request-context.ts';
import type { Billing } from '../billing/index.ts';
import type { Limits } from '../limits.ts';
import type { Counters, Guards } from '../middleware/guards.ts';
import { type UsageResponse, usageResponse } from './schema.ts';

/**
 * GET /api/v1/auth/usage (SPEC Endpoints; DECISIONS §4): anonymous callers see the anonymous
 * allowance of their IP; authenticated ones the export/SQL daily cap. It counts toward neither.
 * The credit balance goes in X-Credits-Remaining, not the body.
 */
export interface UsageHandlerDeps {
  readonly counters: Pick<Counters, 'anonymous'>;
  readonly limits: Limits;
  readonly billing: Pick<Billing, 'balance'>;
  readonly guards: Pick<Guards, 'exportCapOptions'>;
}

export function usageHandler(deps: UsageHandlerDeps): RequestHandler {
  const { counters, limits, billing, guards } = deps;
  return async function getUsage(req, res) {
    const caller = callerOf(req);
    let body: UsageResponse;
    if (caller.kind === 'account') {
      const remaining = await dailyCapRemaining(guards.exportCapOptions, caller.accountId);
      res.setHeader('X-Credits-Remaining', formatUsd(await billing.balance(caller.accountId)));
      body = { account_state: 'authenticated', usage: { requests_remaining: remaining, request_limit: limits.exportDaily } };
    } else {
      const current = await counters.anonymous.get(caller.ip);
      const limit = limits.anonymous.points;
      body = { account_state: 'anonymous', usage: { requests_remaining: remainingOf(limit, current?.consumedPoints ?? 0), request_limit: limit } };
    }
    res.json(usageResponse.parse(body));
  };
}
