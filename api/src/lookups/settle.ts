/**
 * Charges a finished lookup (402 if the balance cannot cover it, nothing charged) and builds the
 * success envelope. Shared by REST and MCP so billing cannot drift between them. The response is
 * the charge's delivery: one that never goes out whole is refunded. A HEAD delivers no row, so it
 * is never billed (DECISIONS §3). A REST lookup charges the hold its counter call made (`holdCredit`).
 */
import type { Request, Response } from 'express';
import { type Billing, deliverCharged, holdOf, payerOf, setCreditHeaders } from '../billing/index.ts';
import type { AccountState } from '../errors/codes.ts';
import { type Caller, callerOf, requestIdOf } from '../request-context.ts';
import type { LookupData, LookupOutcome } from './types.ts';

export interface LookupEnvelope {
  status: 'success';
  account_state: AccountState;
  data: LookupData;
}

/** The envelope's text before its data, per account state: written once, not per answer. */
const ENVELOPE_HEAD: Record<AccountState, string> = {
  anonymous: '{"status":"success","account_state":"anonymous","data":',
  authenticated: '{"status":"success","account_state":"authenticated","data":',
};

/**
 * The envelope as `JSON.stringify` writes it (the lookup tests pin the bodies), with only the data
 * serialised per answer: a hand-specialised serialiser for the one shape every lookup answers.
 */
export function lookupEnvelopeJson(envelope: LookupEnvelope): string {
  return `${ENVELOPE_HEAD[envelope.account_state]}${JSON.stringify(envelope.data)}}`;
}

export function accountStateOf(caller: Caller): AccountState {
  return caller.kind === 'account' ? 'authenticated' : 'anonymous';
}

export async function settleLookup(billing: Billing, req: Request, res: Response, outcome: LookupOutcome): Promise<LookupEnvelope> {
  const payer = payerOf(req);
  if (payer && req.method !== 'HEAD') {
    const costPerRowMicro = outcome.rows ? outcome.costMicro / outcome.rows : 0;
    const delivery = await billing.deliverOnce(payer, {
      costMicro: outcome.costMicro,
      breakdown: [{ source: outcome.source.id, rows: outcome.rows, costPerRowMicro, costMicro: outcome.costMicro }],
      requestId: requestIdOf(req) || undefined,
      priceClass: outcome.source.priceClass,
    }, holdOf(req));
    setCreditHeaders(res, delivery.settlement);
    deliverCharged(res, delivery);
  }
  return { status: 'success', account_state: accountStateOf(callerOf(req)), data: outcome.data };
}
