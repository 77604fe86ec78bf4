/** The account's upgrade and top-off requests, from the dashboard; an operator decides them (DECISIONS §10). */
import type { z } from 'zod';
import { ErrorCode } from '../../errors/codes.ts';
import { parseUsd } from '../../money.ts';
import { type RouteDeclaration, declareRoute } from '../../routes/declare.ts';
import { inputOf } from '../../routes/validate.ts';
import { SESSION_ERRORS, accountOf, sessionDoc } from '../declare.ts';
import { paymentAnswer, type PaymentAnswer, paymentBody, paymentsAnswer, type PaymentsAnswer } from '../schemas.ts';
import type { OperatorApprovalPayments, PaymentAsk } from './payments.ts';

export interface PaymentRouteDeps {
  readonly payments: OperatorApprovalPayments;
}

/** The request's ask: a tier to upgrade to, or a top-off amount in micro-USD. */
export function paymentAskOf(body: z.output<typeof paymentBody>): PaymentAsk {
  return body.kind === 'upgrade' ? { kind: body.kind, tier: body.tier } : { kind: body.kind, amountMicro: parseUsd(body.amount_usd) };
}

export const paymentRoutes: readonly RouteDeclaration<PaymentRouteDeps>[] = [
  declareRoute<PaymentRouteDeps>({
    method: 'get',
    path: '/payments',
    visibility: 'session',
    style: 'flat',
    doc: sessionDoc({ method: 'get', path: '/payments', summary: 'The account\'s upgrade and top-off requests', status: 200, answer: paymentsAnswer, errors: SESSION_ERRORS }),
    handler: (s) =>
      async function paymentsRoute(req, res) {
        res.json({ status: 'success', requests: await s.payments.list(accountOf(req)), how_it_works: s.payments.howItWorks } satisfies PaymentsAnswer);
      },
  }),
  declareRoute<PaymentRouteDeps>({
    method: 'post',
    path: '/payments',
    visibility: 'session',
    style: 'flat',
    doc: sessionDoc({
      method: 'post',
      path: '/payments',
      summary: 'Request an upgrade or a top-off',
      status: 201,
      answer: paymentAnswer,
      errors: [...SESSION_ERRORS, ErrorCode.INVALID_INPUT, ErrorCode.PAYMENTS_PENDING],
      body: paymentBody,
    }),
    handler: (s) =>
      async function requestPaymentRoute(req, res) {
        const ask = paymentAskOf(inputOf(req, paymentBody));
        res.status(201).json({ status: 'success', request: await s.payments.request(accountOf(req), ask) } satisfies PaymentAnswer);
      },
  }),
];
