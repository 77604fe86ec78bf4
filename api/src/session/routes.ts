/**
 * The dashboard's session routes under /dashboard/api (DECISIONS §10). Internal to the web
 * application: not part of the public API, authenticated by the session cookie only (an
 * Authorization header is ignored here, as the cookie is on /api/v1), CSRF-checked on every
 * state-changing request. Sheets and SQL reuse the public routes' own handlers and guards with the
 * session's account as the caller, so their rules, caps and billing are the same by construction.
 */
import express, { type Request, type RequestHandler, type Router } from 'express';
import { z } from 'zod';
import { SOURCES } from '@uda/shared/catalog';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import { TIERS } from '../limits.ts';
import { parseUsd } from '../money.ts';
import { datasetRoutes } from '../routes/datasets/routes.ts';
import { queryRoutes } from '../routes/query/routes.ts';
import { setStyle } from '../request-context.ts';
import type { Services } from '../services.ts';
import { sqlNameOf } from '../sheets/names.ts';
import { listDatasets } from '../sheets/store.ts';
import { type AuthDeps, signIn, signUp } from './auth.ts';
import { clearSessionCookie, sessionIdOf, setSessionCookie } from './cookies.ts';
import { requireCsrf, requireSession, sessionOf } from './middleware.ts';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, verifyPassword } from './passwords.ts';
import { OperatorApprovalPayments, type PaymentAdapter } from './payments.ts';
import { SigninLimit } from './signin-limit.ts';
import { SessionStore } from './store.ts';
import { ledgerPage, usageSummary } from './usage.ts';

/** Reveal asks for the password again when it was last checked longer ago than this. */
export const REVEAL_REAUTH_AFTER_MS = 5 * 60 * 1000;

const credentials = z.object({
  email: z.email({ error: 'Enter a valid email address.' }).max(254),
  password: z
    .string({ error: 'Enter a password.' })
    .min(PASSWORD_MIN_LENGTH, `The password needs at least ${PASSWORD_MIN_LENGTH} characters.`)
    .max(PASSWORD_MAX_LENGTH, `The password is at most ${PASSWORD_MAX_LENGTH} characters.`),
});
const signinBody = z.object({ email: z.string().max(254), password: z.string().max(PASSWORD_MAX_LENGTH) });
const keyName = z.object({ name: z.string().trim().min(1, 'Give the key a name.').max(100, 'The name is at most 100 characters.') });
const revealBody = z.object({ password: z.string().max(PASSWORD_MAX_LENGTH).optional() });
const paymentBody = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('upgrade'), tier: z.enum(TIERS as [string, ...string[]]) }),
  z.object({ kind: z.literal('topoff'), amount_usd: z.string().regex(/^\d{1,5}(\.\d{1,2})?$/, 'Give the amount in USD, e.g. 10 or 25.50.') }),
]);

function parse<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const parsed = schema.safeParse(value ?? {});
  if (!parsed.success) throw new ApiError(ErrorCode.INVALID_INPUT, { message: parsed.error.issues[0]?.message ?? 'Invalid request.' });
  return parsed.data;
}

export interface SessionRouterOptions {
  payments?: PaymentAdapter;
}

export function sessionRouter(services: Services, options: SessionRouterOptions = {}): Router {
  const { db, accounts, keys } = services;
  const sessions = new SessionStore(db);
  const deps: AuthDeps = { db, accounts, sessions };
  const limit = new SigninLimit(services.limiterBackend);
  const payments = options.payments ?? new OperatorApprovalPayments(db, accounts);
  const router = express.Router();
  const flat: RequestHandler = (req, _res, next) => (setStyle(req, 'flat'), next());
  const signedIn = [requireSession({ store: sessions, accounts }), requireCsrf()];
  const accountOf = (req: Request) => sessionOf(req).accountId;

  router.use(flat);

  // Signing up or in always starts a new session and ends the one the browser had (rotation).
  const startSession = async (req: Request, res: express.Response, sessionId: string) => {
    const previous = sessionIdOf(req);
    if (previous) await sessions.deleteSession(previous);
    setSessionCookie(req, res, sessionId);
  };

  router.post('/signup', async (req, res) => {
    const body = parse(credentials, req.body);
    await limit.signUp(req);
    const { sessionId, user } = await signUp(deps, body.email, body.password);
    await startSession(req, res, sessionId);
    res.status(201).json({ status: 'success', email: user.email });
  });

  router.post('/signin', async (req, res) => {
    const body = parse(signinBody, req.body);
    const { sessionId, user } = await limit.signIn(req, body.email, () => signIn(deps, body.email, body.password));
    await startSession(req, res, sessionId);
    res.json({ status: 'success', email: user.email });
  });

  router.post('/signout', ...signedIn, async (req, res) => {
    const id = sessionIdOf(req);
    if (id) await sessions.deleteSession(id);
    clearSessionCookie(req, res);
    res.json({ status: 'success' });
  });

  router.get('/session', ...signedIn, async (req, res) => {
    const session = sessionOf(req);
    const account = await accounts.mustGet(session.accountId);
    res.setHeader('Cache-Control', 'no-store');
    res.json({ status: 'success', email: session.email, tier: account.tier, csrf_token: session.csrfToken });
  });

  router.get('/keys', ...signedIn, async (req, res) => {
    res.json({ status: 'success', keys: await keys.list(accountOf(req)) });
  });

  router.post('/keys', ...signedIn, async (req, res) => {
    const { name } = parse(keyName, req.body);
    res.setHeader('Cache-Control', 'no-store');
    res.status(201).json({ status: 'success', key: await keys.create(accountOf(req), name) });
  });

  router.post('/keys/reveal', ...signedIn, async (req, res) => {
    const session = sessionOf(req);
    const { password } = parse(revealBody, req.body);
    if (Date.now() - session.authenticatedAt.getTime() > REVEAL_REAUTH_AFTER_MS) {
      const hash = await sessions.passwordHashOf(session.userId);
      if (!password || !hash || !(await verifyPassword(password, hash))) throw new ApiError(ErrorCode.REAUTH_REQUIRED);
      await sessions.markAuthenticated(session.idHash);
    }
    const key = await keys.reveal(session.accountId);
    if (!key) throw new ApiError(ErrorCode.INVALID_INPUT, { message: 'There is no active key to reveal. Create one first.' });
    res.setHeader('Cache-Control', 'no-store');
    res.json({ status: 'success', key });
  });

  router.post('/keys/revoke', ...signedIn, async (req, res) => {
    const revoked = await keys.revoke(accountOf(req));
    if (!revoked) throw new ApiError(ErrorCode.INVALID_INPUT, { message: 'There is no active key to revoke.' });
    res.json({ status: 'success' });
  });

  router.post('/keys/replace', ...signedIn, async (req, res) => {
    const accountId = accountOf(req);
    const active = (await keys.list(accountId)).find((k) => k.status === 'active');
    if (!active) throw new ApiError(ErrorCode.INVALID_INPUT, { message: 'There is no active key to replace. Create one instead.' });
    res.setHeader('Cache-Control', 'no-store');
    res.status(201).json({ status: 'success', key: await keys.create(accountId, active.name) });
  });

  router.get('/usage', ...signedIn, async (req, res) => {
    res.json({ status: 'success', ...(await usageSummary(services, accountOf(req))), payments: payments.howItWorks });
  });

  router.get('/ledger', ...signedIn, async (req, res) => {
    const page = Math.max(0, Math.min(10_000, Number.parseInt(String(req.query.page ?? '0'), 10) || 0));
    res.json({ status: 'success', ...(await ledgerPage(db, accountOf(req), page)) });
  });

  router.get('/payments', ...signedIn, async (req, res) => {
    res.json({ status: 'success', requests: await payments.list(accountOf(req)), how_it_works: payments.howItWorks });
  });

  router.post('/payments', ...signedIn, async (req, res) => {
    const body = parse(paymentBody, req.body);
    const ask = body.kind === 'upgrade' ? { kind: body.kind, tier: body.tier as (typeof TIERS)[number] } : { kind: body.kind, amountMicro: parseUsd(body.amount_usd) };
    res.status(201).json({ status: 'success', request: await payments.request(accountOf(req), ask) });
  });

  router.get('/tables', ...signedIn, async (req, res) => {
    const sheets = (await listDatasets(db, accountOf(req))).filter((d) => d.status === 'ready');
    res.json({
      status: 'success',
      tables: SOURCES.flatMap((s) => s.tables.map((t) => ({ name: t.name, source: s.id, description: t.description, columns: [] as unknown[] }))),
      sheets: sheets.map((d) => ({ slug: d.slug, table: sqlNameOf(d.slug), columns: d.columns ?? [] })),
    });
  });

  // Sheets and SQL: the public routes' handler chains, behind the session instead of a key.
  for (const route of datasetRoutes) {
    router[route.method](String(route.path).replace('/api/v1/datasets', '/datasets'), ...signedIn, ...route.handlers(services));
  }
  const sql = queryRoutes.find((r) => r.method === 'post' && r.path === '/api/v1/query');
  if (sql) router.post('/query', ...signedIn, ...sql.handlers(services));

  return router;
}
