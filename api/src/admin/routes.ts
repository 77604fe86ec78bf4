/**
 * The admin API's routes (DECISIONS §5), declared like every route (`routes/declare.ts`),
 * `visibility: 'internal'`: left out of the OpenAPI document, served on the admin port only, behind
 * the bearer ADMIN_TOKEN (`app.ts`); `npm run admin` is a thin client over them.
 */
import type { RequestHandler } from 'express';
import { z } from 'zod';
import type { AccountStore } from '../accounts/store.ts';
import type { Billing } from '../billing/index.ts';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import { type RouteDeclaration, declareRoute } from '../routes/declare.ts';
import type { ResponseDoc, RouteDoc } from '../routes/types.ts';
import { inputOf } from '../routes/validate.ts';
import type { KeyStore } from '../keys/store.ts';
import type { OperatorApprovalPayments } from '../session/payments/payments.ts';
import { keyItemSchema, paymentRequestSchema } from '../session/schemas.ts';
import { accountOf, accountShown, adminSchemas, show, tier } from './accounts.ts';

/** What the admin routes work with. */
export interface AdminDeps {
  readonly accounts: AccountStore;
  readonly keys: KeyStore;
  readonly billing: Pick<Billing, 'readout' | 'settleOpenLease'>;
  readonly payments: OperatorApprovalPayments;
}

/** The path's account id, once the account is known to exist (404 otherwise). */
async function existingAccountId(services: Pick<AdminDeps, 'accounts'>, req: Parameters<RequestHandler>[0]): Promise<string> {
  const id = idOf(req);
  await accountOf(services, id);
  return id;
}

/** Admin's validation messages name every failing field (`field: message; …`), as the CLI prints them. */
const everyIssue = (error: z.ZodError) => error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');

interface AdminDocFields {
  /** The Express path; its OpenAPI template is derived (`:id` → `{id}`). */
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  readonly status: number;
  readonly answer: z.ZodType;
  readonly params?: z.ZodObject;
  readonly body?: z.ZodType;
}

/** An admin route's schemas: every one can answer 401, 404 and 400, and names every failing field. */
function adminDoc(route: AdminDocFields): RouteDoc {
  const answer: ResponseDoc = { description: route.summary, content: { 'application/json': route.answer } };
  return {
    path: route.path.replace(/:(\w+)/g, '{$1}'),
    operationId: route.operationId,
    summary: route.summary,
    tag: 'Admin',
    auth: 'none',
    ...(route.params ? { params: route.params } : {}),
    ...(route.body ? { body: { contentType: 'application/json', schema: route.body } } : {}),
    describeInvalid: everyIssue,
    responses: { [route.status]: answer },
    errors: [ErrorCode.ADMIN_UNAUTHORIZED, ErrorCode.ADMIN_NOT_FOUND, ErrorCode.INVALID_INPUT],
  };
}

const idOf = (req: Parameters<RequestHandler>[0]) => inputOf(req, adminSchemas.account).id;

/** Every admin route, in one list. */
export const ADMIN_OWN_ROUTES: readonly RouteDeclaration<AdminDeps>[] = [
  declareRoute<AdminDeps>({
    method: 'post',
    path: '/admin/accounts',
    visibility: 'internal',
    style: 'plain',
    doc: adminDoc({
      path: '/admin/accounts',
      operationId: 'adminCreateAccount',
      summary: 'Create an account with a first key',
      status: 201,
      answer: z.object({ account_id: z.string(), api_key: z.string(), tier, balance_usd: z.number() }),
      body: adminSchemas.createAccount,
    }),
    handler: (s) =>
      async function createAccount(req, res) {
        const created = await s.accounts.create(inputOf(req, adminSchemas.createAccount));
        const apiKey = await s.keys.create(created.id, 'default');
        res.status(201).json({ account_id: created.id, api_key: apiKey, tier: created.tier, balance_usd: (await show(s, created.id)).balance_usd });
      },
  }),
  declareRoute<AdminDeps>({
    method: 'get',
    path: '/admin/accounts/:id',
    visibility: 'internal',
    style: 'plain',
    doc: adminDoc({
      path: '/admin/accounts/:id',
      operationId: 'adminShowAccount',
      summary: 'An account: tier and balance',
      status: 200,
      answer: accountShown,
      params: adminSchemas.account,
    }),
    handler: (s) =>
      async function showAccountRoute(req, res) {
        res.json(await show(s, idOf(req)));
      },
  }),
  declareRoute<AdminDeps>({
    method: 'put',
    path: '/admin/accounts/:id/tier',
    visibility: 'internal',
    style: 'plain',
    doc: adminDoc({
      path: '/admin/accounts/:id/tier',
      operationId: 'adminSetTier',
      summary: 'Set an account\'s tier',
      status: 200,
      answer: accountShown,
      params: adminSchemas.account,
      body: adminSchemas.setTier,
    }),
    handler: (s) =>
      async function setTier(req, res) {
        const id = await existingAccountId(s, req);
        await s.accounts.setTier(id, inputOf(req, adminSchemas.setTier).tier);
        res.json(await show(s, id));
      },
  }),
  declareRoute<AdminDeps>({
    method: 'post',
    path: '/admin/accounts/:id/topoff',
    visibility: 'internal',
    style: 'plain',
    doc: adminDoc({
      path: '/admin/accounts/:id/topoff',
      operationId: 'adminTopOff',
      summary: 'Add top-off credit',
      status: 200,
      answer: accountShown,
      params: adminSchemas.account,
      body: adminSchemas.amount,
    }),
    handler: (s) =>
      async function topOff(req, res) {
        const id = await existingAccountId(s, req);
        await s.accounts.addTopoff(id, inputOf(req, adminSchemas.amount).usd);
        res.json(await show(s, id));
      },
  }),
  declareRoute<AdminDeps>({
    method: 'put',
    path: '/admin/accounts/:id/grant',
    visibility: 'internal',
    style: 'plain',
    doc: adminDoc({
      path: '/admin/accounts/:id/grant',
      operationId: 'adminSetGrant',
      summary: 'Set the grant part of the balance',
      status: 200,
      answer: accountShown,
      params: adminSchemas.account,
      body: adminSchemas.amount,
    }),
    handler: (s) =>
      async function setGrant(req, res) {
        const id = await existingAccountId(s, req);
        // "Set the grant to N" means the balance's grant part: what an open lease holds of it comes back
        // first, so the set value is not topped up by credit the lease returns later.
        await s.billing.settleOpenLease(id);
        await s.accounts.setGrant(id, inputOf(req, adminSchemas.amount).usd);
        res.json(await show(s, id));
      },
  }),
  declareRoute<AdminDeps>({
    method: 'post',
    path: '/admin/accounts/:id/keys',
    visibility: 'internal',
    style: 'plain',
    doc: adminDoc({
      path: '/admin/accounts/:id/keys',
      operationId: 'adminCreateKey',
      summary: 'Create a key (the previous one is deactivated)',
      status: 201,
      answer: z.object({ api_key: z.string() }),
      params: adminSchemas.account,
      body: adminSchemas.createKey,
    }),
    handler: (s) =>
      async function createKey(req, res) {
        const id = await existingAccountId(s, req);
        const { name } = inputOf(req, adminSchemas.createKey);
        res.status(201).json({ api_key: await s.keys.create(id, name) });
      },
  }),
  declareRoute<AdminDeps>({
    method: 'post',
    path: '/admin/accounts/:id/keys/legacy',
    visibility: 'internal',
    style: 'plain',
    doc: adminDoc({
      path: '/admin/accounts/:id/keys/legacy',
      operationId: 'adminImportLegacyKey',
      summary: 'Import a legacy `dk_` key',
      status: 201,
      answer: z.object({ imported: z.literal(true) }),
      params: adminSchemas.account,
      body: adminSchemas.importLegacyKey,
    }),
    handler: (s) =>
      async function importLegacyKey(req, res) {
        const id = await existingAccountId(s, req);
        const input = inputOf(req, adminSchemas.importLegacyKey);
        await s.keys.importLegacy(id, input.name, input.key);
        res.status(201).json({ imported: true });
      },
  }),
  declareRoute<AdminDeps>({
    method: 'delete',
    path: '/admin/accounts/:id/keys/active',
    visibility: 'internal',
    style: 'plain',
    doc: adminDoc({
      path: '/admin/accounts/:id/keys/active',
      operationId: 'adminRevokeKey',
      summary: 'Revoke the active key',
      status: 200,
      answer: z.object({ revoked: z.number().int() }),
      params: adminSchemas.account,
    }),
    handler: (s) =>
      async function revokeKey(req, res) {
        const id = await existingAccountId(s, req);
        res.json({ revoked: await s.keys.revoke(id) });
      },
  }),
  declareRoute<AdminDeps>({
    method: 'get',
    path: '/admin/accounts/:id/keys',
    visibility: 'internal',
    style: 'plain',
    doc: adminDoc({
      path: '/admin/accounts/:id/keys',
      operationId: 'adminListKeys',
      summary: 'An account\'s keys',
      status: 200,
      answer: z.object({ keys: z.array(keyItemSchema) }),
      params: adminSchemas.account,
    }),
    handler: (s) =>
      async function listKeys(req, res) {
        const id = await existingAccountId(s, req);
        res.json({ keys: await s.keys.list(id) });
      },
  }),
  // The dashboard's upgrade and top-off requests (DECISIONS §10): an operator approves or rejects them.
  declareRoute<AdminDeps>({
    method: 'get',
    path: '/admin/payments',
    visibility: 'internal',
    style: 'plain',
    doc: adminDoc({
      path: '/admin/payments',
      operationId: 'adminPendingPayments',
      summary: 'Pending upgrade and top-off requests',
      status: 200,
      answer: z.object({ pending: z.array(paymentRequestSchema) }),
    }),
    handler: (s) =>
      async function pendingPayments(_req, res) {
        res.json({ pending: await s.payments.pending() });
      },
  }),
  declareRoute<AdminDeps>({
    method: 'post',
    path: '/admin/payments/:id/:decision',
    visibility: 'internal',
    style: 'plain',
    doc: adminDoc({
      path: '/admin/payments/:id/:decision',
      operationId: 'adminDecidePayment',
      summary: 'Approve or reject a pending request',
      status: 200,
      answer: z.object({ request: paymentRequestSchema, account: accountShown }),
      params: adminSchemas.decision,
    }),
    handler: (s) =>
      async function decidePayment(req, res) {
        const { id, decision } = inputOf(req, adminSchemas.decision);
        if (decision !== 'approve' && decision !== 'reject') throw new ApiError(ErrorCode.ADMIN_NOT_FOUND, { message: `Unknown decision ${decision}.` });
        const decided = decision === 'approve' ? await s.payments.approve(id) : await s.payments.reject(id);
        if (!decided) throw new ApiError(ErrorCode.ADMIN_NOT_FOUND, { message: `No pending payment request ${id}.` });
        res.json({ request: decided, account: await show(s, decided.account_id) });
      },
  }),
];

