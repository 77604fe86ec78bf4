/** The dashboard's usage and credit page (DECISIONS §3, §4): its figures and the ledger, one page at a time. */
import type { OperatorApprovalPayments } from '../payments/payments.ts';
import { type RouteDeclaration, declareRoute } from '../../routes/declare.ts';
import { inputOf } from '../../routes/validate.ts';
import { SESSION_ERRORS, accountOf, sessionDoc } from '../declare.ts';
import { doneAnswer, ledgerAnswer, type LedgerAnswer, ledgerQuery } from '../schemas.ts';
import { ledgerPage, type UsageDeps, usageSummary } from './usage.ts';
import { type UsageAnswer, usageAnswerSchema } from './usage-schema.ts';

export interface UsageRouteDeps extends UsageDeps {
  readonly payments: Pick<OperatorApprovalPayments, 'howItWorks'>;
}

export const sessionUsageRoutes: readonly RouteDeclaration<UsageRouteDeps>[] = [
  declareRoute<UsageRouteDeps>({
    method: 'get',
    path: '/usage',
    visibility: 'session',
    style: 'flat',
    doc: sessionDoc({
      method: 'get',
      path: '/usage',
      summary: 'Balance, caps and this month\'s spend',
      status: 200,
      answer: usageAnswerSchema.extend({ status: doneAnswer.shape.status }),
      errors: SESSION_ERRORS,
    }),
    handler: (s) =>
      async function usageRoute(req, res) {
        res.json({ status: 'success', ...(await usageSummary(s, accountOf(req))), payments: s.payments.howItWorks } satisfies UsageAnswer & { status: 'success' });
      },
  }),
  declareRoute<Pick<UsageRouteDeps, 'db'>>({
    method: 'get',
    path: '/ledger',
    visibility: 'session',
    style: 'flat',
    doc: sessionDoc({ method: 'get', path: '/ledger', summary: 'Charges and refunds, newest first, one page', status: 200, answer: ledgerAnswer, errors: SESSION_ERRORS, query: ledgerQuery }),
    handler: (s) =>
      async function ledgerRoute(req, res) {
        const { page } = inputOf(req, ledgerQuery);
        res.json({ status: 'success', ...(await ledgerPage(s.db, accountOf(req), page)) } satisfies LedgerAnswer);
      },
  }),
];
