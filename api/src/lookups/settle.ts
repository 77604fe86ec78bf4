/**
 * Charges a finished lookup through the meter (402 if the balance cannot cover it, nothing charged)
 * and builds the success envelope. Shared by REST and MCP so billing cannot drift between them.
 */
import type { Request, Response } from 'express';
import type { AccountState } from '../errors/codes.ts';
import type { Meter } from '../metering/meter.ts';
import { type Caller, callerOf } from '../request-context.ts';
import type { LookupData, LookupOutcome } from './types.ts';

export interface LookupEnvelope {
  status: 'success';
  account_state: AccountState;
  data: LookupData;
}

export function accountStateOf(caller: Caller): AccountState {
  return caller.kind === 'account' ? 'authenticated' : 'anonymous';
}

export async function settleLookup(meter: Meter, req: Request, res: Response, outcome: LookupOutcome, idempotencyKey?: string): Promise<LookupEnvelope> {
  const caller = callerOf(req);
  const costPerRowMicro = outcome.rows ? outcome.costMicro / outcome.rows : 0;
  await meter.settle(req, res, {
    costMicro: outcome.costMicro,
    idempotencyKey,
    breakdown: [{ source: outcome.source.id, rows: outcome.rows, costPerRowMicro, costMicro: outcome.costMicro }],
  });
  return { status: 'success', account_state: accountStateOf(caller), data: outcome.data };
}
