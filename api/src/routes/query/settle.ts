/**
 * Billing and the six result headers of the SQL routes (SPEC Resources "Query result headers";
 * DECISIONS §3, §6). The first request of a window charges; a re-read settles under the same key,
 * which the ledger treats as a duplicate, so it costs 0 and is reported as cached.
 */
import type { Request, Response } from 'express';
import { ApiError } from '../../errors/api-error.ts';
import { ErrorCode } from '../../errors/codes.ts';
import type { Settlement } from '../../metering/meter.ts';
import { callerOf } from '../../request-context.ts';
import type { Services } from '../../services.ts';
import type { SqlCaller, SqlResult } from '../../sql/run-sql.ts';
import { FREE_USAGE, usageHeader } from '../../sql/usage.ts';

export function sqlCallerOf(req: Request): SqlCaller {
  const caller = callerOf(req);
  // requireKey runs first on every SQL route; this guards a mis-registered route.
  if (caller.kind !== 'account') throw new ApiError(ErrorCode.AUTH_REQUIRED);
  return { accountId: caller.accountId, tier: caller.tier };
}

export async function settleSql(services: Services, req: Request, res: Response, result: SqlResult): Promise<Settlement> {
  const { usage } = result;
  const settlement = await services.meter.settle(req, res, {
    costMicro: usage.costMicro,
    idempotencyKey: result.chargeKey,
    breakdown: usage.breakdown,
    queryId: result.queryId,
  });
  const charged = settlement.chargedMicro > 0;
  const shown = charged ? usage : FREE_USAGE;
  res.setHeader('X-Service-Cached', String(result.cached && !charged));
  res.setHeader('X-Service-Query-Id', result.queryId);
  res.setHeader('X-Service-Rows-Charged', String(shown.rowsCharged));
  res.setHeader('X-Service-Usage', usageHeader(shown));
  return settlement;
}
