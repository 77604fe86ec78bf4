/**
 * The admin HTTP API (DECISIONS §5): its own port, bound to 127.0.0.1 by default, bearer ADMIN_TOKEN.
 * `npm run admin` is a thin client over it.
 */
import { timingSafeEqual } from 'node:crypto';
import express, { type Express, type RequestHandler } from 'express';
import { z } from 'zod';
import type { Account } from '../accounts/store.ts';
import type { BalanceReadout } from '../billing/billing.ts';
import { AccountNotFound } from '../accounts/store.ts';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import { errorHandler, notFound } from '../errors/handler.ts';
import { TIERS } from '../limits.ts';
import { parseUsd, usdNumber } from '../money.ts';
import type { Services } from '../services.ts';
import { OperatorApprovalPayments } from '../session/payments.ts';

const tier = z.enum(TIERS as ['free', 'developer', 'pro']);
const usd = z.union([z.string(), z.number()]).transform((v, ctx) => {
  try {
    return parseUsd(String(v));
  } catch {
    ctx.addIssue({ code: 'custom', message: 'usd must be a non-negative amount with at most 6 decimals' });
    return z.NEVER;
  }
});

export const adminSchemas = {
  createAccount: z.object({ email: z.string().min(3).max(320), tier }),
  setTier: z.object({ tier }),
  amount: z.object({ usd }),
  createKey: z.object({ name: z.string().min(1).max(100) }),
  importLegacyKey: z.object({ name: z.string().min(1).max(100), key: z.string().startsWith('dk_') }),
};

/**
 * An account as admin shows it. The balance is the one readout every caller sees (DECISIONS §3
 * "One balance"): the buckets plus the unspent part of the open credit lease, never the buckets alone.
 */
export function showAccount(account: Pick<Account, 'id' | 'tier'>, balance: BalanceReadout) {
  return {
    account_id: account.id,
    tier: account.tier,
    balance_usd: usdNumber(balance.balanceMicro),
    grant_usd: usdNumber(balance.grantMicro),
    topoff_usd: usdNumber(balance.topoffMicro),
  };
}

function parse<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  throw new ApiError(ErrorCode.INVALID_INPUT, { message: result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') });
}

function bearer(token: string): RequestHandler {
  const expected = Buffer.from(`Bearer ${token}`);
  return function adminAuth(req, _res, next) {
    const given = Buffer.from(req.get('authorization') ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new ApiError(ErrorCode.ADMIN_UNAUTHORIZED);
    next();
  };
}

export function buildAdminApp(services: Services): Express {
  const { accounts, keys, billing } = services;
  const app = express();
  app.disable('x-powered-by');
  app.use(bearer(services.adminToken), express.json({ limit: '16kb' }));
  const account = async (id: string) => {
    const found = await accounts.get(id);
    if (!found) throw new ApiError(ErrorCode.ADMIN_NOT_FOUND, { message: `Account ${id} not found.` });
    return found;
  };
  const show = async (id: string) => showAccount(await account(id), await billing.readout(id));
  app.post('/admin/accounts', async (req, res) => {
    const input = parse(adminSchemas.createAccount, req.body);
    const created = await accounts.create(input);
    const apiKey = await keys.create(created.id, 'default');
    res.status(201).json({ account_id: created.id, api_key: apiKey, tier: created.tier, balance_usd: (await show(created.id)).balance_usd });
  });
  app.get('/admin/accounts/:id', async (req, res) => {
    res.json(await show(req.params.id));
  });
  app.put('/admin/accounts/:id/tier', async (req, res) => {
    const { tier: next } = parse(adminSchemas.setTier, req.body);
    await account(req.params.id);
    await accounts.setTier(req.params.id, next);
    res.json(await show(req.params.id));
  });
  app.post('/admin/accounts/:id/topoff', async (req, res) => {
    const { usd: micro } = parse(adminSchemas.amount, req.body);
    await account(req.params.id);
    await accounts.addTopoff(req.params.id, micro);
    res.json(await show(req.params.id));
  });
  app.put('/admin/accounts/:id/grant', async (req, res) => {
    const { usd: micro } = parse(adminSchemas.amount, req.body);
    await account(req.params.id);
    // "Set the grant to N" means the balance's grant part: what an open lease holds of it comes back
    // first, so the set value is not topped up by credit the lease returns later.
    await billing.settleOpenLease(req.params.id);
    await accounts.setGrant(req.params.id, micro);
    res.json(await show(req.params.id));
  });
  app.post('/admin/accounts/:id/keys', async (req, res) => {
    const { name } = parse(adminSchemas.createKey, req.body);
    await account(req.params.id);
    res.status(201).json({ api_key: await keys.create(req.params.id, name) });
  });
  app.post('/admin/accounts/:id/keys/legacy', async (req, res) => {
    const input = parse(adminSchemas.importLegacyKey, req.body);
    await account(req.params.id);
    await keys.importLegacy(req.params.id, input.name, input.key);
    res.status(201).json({ imported: true });
  });
  app.delete('/admin/accounts/:id/keys/active', async (req, res) => {
    await account(req.params.id);
    res.json({ revoked: await keys.revoke(req.params.id) });
  });
  app.get('/admin/accounts/:id/keys', async (req, res) => {
    await account(req.params.id);
    res.json({ keys: await keys.list(req.params.id) });
  });
  // The dashboard's upgrade and top-off requests (DECISIONS §10): an operator approves or rejects them.
  const payments = new OperatorApprovalPayments(services.db, accounts);
  app.get('/admin/payments', async (_req, res) => {
    res.json({ pending: await payments.pending() });
  });
  app.post('/admin/payments/:id/:decision', async (req, res) => {
    const { id, decision } = req.params;
    if (decision !== 'approve' && decision !== 'reject') throw new ApiError(ErrorCode.ADMIN_NOT_FOUND, { message: `Unknown decision ${decision}.` });
    const decided = decision === 'approve' ? await payments.approve(id) : await payments.reject(id);
    if (!decided) throw new ApiError(ErrorCode.ADMIN_NOT_FOUND, { message: `No pending payment request ${id}.` });
    res.json({ request: decided, account: await show(decided.account_id) });
  });
  app.use(notFound());
  app.use(function accountNotFound(err: unknown, _req: express.Request, _res: express.Response, next: express.NextFunction) {
    next(err instanceof AccountNotFound ? new ApiError(ErrorCode.ADMIN_NOT_FOUND, { message: err.message }) : err);
  });
  app.use(errorHandler({ logger: services.logger }));
  return app;
}
