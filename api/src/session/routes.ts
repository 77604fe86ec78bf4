/**
 * The dashboard's session routes under /dashboard/api (DECISIONS §10), declared like the public
 * routes but `internal`: left out of the OpenAPI document. Authenticated by the session cookie only
 * (an Authorization header is ignored here, as the cookie is on /api/v1), CSRF-checked on every
 * state-changing request. Sheets and SQL reuse the public routes' own declarations and handlers
 * with the session's account as the caller, so their rules, caps and billing are the same by
 * construction.
 */
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import type { z } from 'zod';
import { SOURCES } from '@uda/shared/catalog';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import { parseUsd } from '../money.ts';
import { datasetRoutes } from '../sheets/routes.ts';
import { queryRoutes } from '../sql/routes.ts';
import type { ResponseDoc, RouteDeclaration, RouteDoc } from '../routes/types.ts';
import { buildRoute, inputOf } from '../routes/validate.ts';
import { clientIp, setStyle } from '../request-context.ts';
import type { Services } from '../services.ts';
import { sqlNameOf } from '../sheets/names.ts';
import { listDatasets } from '../sheets/store.ts';
import { publicOrigin } from '../mail/messages.ts';
import { signIn, signUp } from './auth/auth.ts';
import { requestPasswordReset, resendVerification, resetPassword, sendVerification, verifyEmail } from './auth/email-flows.ts';
import { clearSessionCookie, sessionIdOf, setSessionCookie } from './auth/cookies.ts';
import { requireCsrf, requireSession, sessionOf } from './middleware.ts';
import { verifyPassword } from './auth/passwords.ts';
import {
  credentialsBody,
  doneAnswer,
  emailAnswer,
  forgotBody,
  resetBody,
  verifyBody,
  type EmailAnswer,
  keyAnswer,
  keyNameBody,
  keysAnswer,
  ledgerAnswer,
  ledgerQuery,
  paymentAnswer,
  paymentBody,
  paymentsAnswer,
  revealBody,
  sessionAnswer,
  signedInAnswer,
  signinBody,
  tablesAnswer,
  type KeyAnswer,
  type KeysAnswer,
  type LedgerAnswer,
  type PaymentAnswer,
  type PaymentsAnswer,
  type SessionAnswer,
  type SignedInAnswer,
  type TablesAnswer,
} from './schemas.ts';
import { ledgerPage, usageSummary } from './usage/usage.ts';
import { type UsageAnswer, usageAnswerSchema } from './usage/usage-schema.ts';

/** Reveal asks for the password again when it was last checked longer ago than this. */
export const REVEAL_REAUTH_AFTER_MS = 5 * 60 * 1000;

const PREFIX = '/dashboard/api';
const INTERNAL = 'the dashboard\'s session API: same-origin, cookie and CSRF, not for API clients';

const json = (description: string, schema: z.ZodType): ResponseDoc => ({ description, content: { 'application/json': schema } });

interface SessionRoute {
  readonly method: 'get' | 'post';
  readonly path: string;
  readonly summary: string;
  readonly status: number;
  readonly answer: z.ZodType;
  readonly errors: readonly ErrorCode[];
  readonly body?: z.ZodType;
  readonly query?: z.ZodObject;
  /** Signed in with a session (and, for a change, its CSRF token); false for sign-up and sign-in. */
  readonly signedIn?: false;
  readonly handler: (services: Services) => RequestHandler;
}

/** The session routes' validation messages stand alone: the first issue's message as written. */
const firstMessage = (error: z.ZodError) => error.issues[0]?.message ?? 'Invalid request.';

function declare(route: SessionRoute): RouteDeclaration {
  const doc: RouteDoc = {
    path: `${PREFIX}${route.path}`,
    operationId: `dashboard${route.method}${route.path.replaceAll('/', '_')}`,
    summary: route.summary,
    tag: 'Dashboard',
    auth: 'none',
    ...(route.body ? { body: { contentType: 'application/json', schema: route.body } } : {}),
    ...(route.query ? { query: route.query } : {}),
    describeInvalid: firstMessage,
    responses: { [route.status]: json(route.summary, route.answer) },
    errors: route.errors,
  };
  const guard = route.signedIn === false ? () => [] : signedIn;
  return { method: route.method, path: route.path, style: 'flat', internal: INTERNAL, doc, handlers: (s) => [...guard(s), route.handler(s)] };
}

function signedIn(services: Services): RequestHandler[] {
  return [requireSession({ store: services.sessions, accounts: services.accounts }), requireCsrf()];
}

const accountOf = (req: Request) => sessionOf(req).accountId;

/** Signing up or in always starts a new session and ends the one the browser had (rotation). */
async function startSession(services: Services, req: Request, res: Response, sessionId: string): Promise<void> {
  const previous = sessionIdOf(req);
  if (previous) await services.sessions.deleteSession(previous);
  setSessionCookie(req, res, sessionId);
}

const authDeps = (s: Services) => ({ db: s.db, accounts: s.accounts, sessions: s.sessions });
const emailDeps = (s: Services) => ({ accounts: s.accounts, sessions: s.sessions, tokens: s.emailTokens, mail: s.mail });
const SESSION_ERRORS = [ErrorCode.SESSION_REQUIRED, ErrorCode.CSRF_REJECTED] as const;

/** One answer for every email, known or not. */
const FORGOT_ANSWER = 'If an account uses this email, a link to reset its password is on its way. It works once, for 1 hour.';

/** Verified sign-up and password reset by email (DECISIONS §5 "Email"): the flows are `email-flows.ts`. */
const EMAIL_ROUTES: readonly SessionRoute[] = [
  {
    method: 'post',
    path: '/email/resend',
    summary: 'Send the verification link again',
    status: 202,
    answer: emailAnswer,
    errors: [...SESSION_ERRORS, ErrorCode.INVALID_INPUT, ErrorCode.EMAIL_RATE_LIMITED],
    handler: (s) =>
      async function resendRoute(req, res) {
        const session = sessionOf(req);
        await s.emailLimit.verification(req, session.accountId);
        await resendVerification(emailDeps(s), { id: session.userId, email: session.email, accountId: session.accountId }, publicOrigin(s.config.PUBLIC_URL, req));
        res.status(202).json({ status: 'success', message: `We sent a new link to ${session.email}.` } satisfies EmailAnswer);
      },
  },
  {
    method: 'post',
    path: '/email/verify',
    summary: 'Verify the email with the token of the link sent to it (no session needed)',
    status: 200,
    answer: emailAnswer,
    errors: [ErrorCode.INVALID_INPUT, ErrorCode.EMAIL_LINK_INVALID],
    body: verifyBody,
    signedIn: false,
    handler: (s) =>
      async function verifyRoute(req, res) {
        const email = await verifyEmail(emailDeps(s), inputOf(req, verifyBody).token);
        res.json({ status: 'success', message: `${email} is verified: SQL, exports and sheet uploads are open to your keys.` } satisfies EmailAnswer);
      },
  },
  {
    method: 'post',
    path: '/password/forgot',
    summary: 'Email a password-reset link (the same answer whether or not the email has an account)',
    status: 202,
    answer: emailAnswer,
    errors: [ErrorCode.INVALID_INPUT, ErrorCode.EMAIL_RATE_LIMITED],
    body: forgotBody,
    signedIn: false,
    handler: (s) =>
      async function forgotRoute(req, res) {
        const { email } = inputOf(req, forgotBody);
        await s.emailLimit.reset(req, email);
        requestPasswordReset(emailDeps(s), email, publicOrigin(s.config.PUBLIC_URL, req));
        res.status(202).json({ status: 'success', message: FORGOT_ANSWER } satisfies EmailAnswer);
      },
  },
  {
    method: 'post',
    path: '/password/reset',
    summary: 'Set a new password with the token of the reset link; every session of the account ends',
    status: 200,
    answer: emailAnswer,
    errors: [ErrorCode.INVALID_INPUT, ErrorCode.EMAIL_LINK_INVALID],
    body: resetBody,
    signedIn: false,
    handler: (s) =>
      async function resetRoute(req, res) {
        const { token, password } = inputOf(req, resetBody);
        await resetPassword(emailDeps(s), token, password);
        // This browser's session, if any, ended with the others: its cookie goes too.
        clearSessionCookie(req, res);
        res.json({ status: 'success', message: 'Your password is changed and every session has ended. Sign in with the new password.' } satisfies EmailAnswer);
      },
  },
];

const OWN_ROUTES: readonly SessionRoute[] = [
  {
    method: 'post',
    path: '/signup',
    summary: 'Sign up: a Free account and a session',
    status: 201,
    answer: signedInAnswer,
    errors: [ErrorCode.INVALID_INPUT, ErrorCode.EMAIL_TAKEN, ErrorCode.SIGNIN_RATE_LIMITED],
    body: credentialsBody,
    signedIn: false,
    handler: (s) =>
      async function signUpRoute(req, res) {
        const body = inputOf(req, credentialsBody);
        await s.signinLimit.signUp(req);
        const { sessionId, user } = await signUp(authDeps(s), body.email, body.password, s.signupAddressOf(clientIp(req)));
        await sendVerification(emailDeps(s), user, publicOrigin(s.config.PUBLIC_URL, req));
        await startSession(s, req, res, sessionId);
        res.status(201).json({ status: 'success', email: user.email } satisfies SignedInAnswer);
      },
  },
  {
    method: 'post',
    path: '/signin',
    summary: 'Sign in: a new session',
    status: 200,
    answer: signedInAnswer,
    errors: [ErrorCode.INVALID_INPUT, ErrorCode.SIGNIN_FAILED, ErrorCode.SIGNIN_RATE_LIMITED],
    body: signinBody,
    signedIn: false,
    handler: (s) =>
      async function signInRoute(req, res) {
        const body = inputOf(req, signinBody);
        const { sessionId, user } = await s.signinLimit.signIn(req, body.email, () => signIn(authDeps(s), body.email, body.password));
        await startSession(s, req, res, sessionId);
        res.json({ status: 'success', email: user.email } satisfies SignedInAnswer);
      },
  },
  ...EMAIL_ROUTES,
  {
    method: 'post',
    path: '/signout',
    summary: 'Sign out: the session ends server-side',
    status: 200,
    answer: doneAnswer,
    errors: SESSION_ERRORS,
    handler: (s) =>
      async function signOutRoute(req, res) {
        const id = sessionIdOf(req);
        if (id) await s.sessions.deleteSession(id);
        clearSessionCookie(req, res);
        res.json({ status: 'success' });
      },
  },
  {
    method: 'get',
    path: '/session',
    summary: 'The signed-in account and its CSRF token',
    status: 200,
    answer: sessionAnswer,
    errors: SESSION_ERRORS,
    handler: (s) =>
      async function sessionRoute(req, res) {
        const session = sessionOf(req);
        const account = await s.accounts.mustGet(session.accountId);
        res.setHeader('Cache-Control', 'no-store');
        res.json({ status: 'success', email: session.email, tier: account.tier, email_verified: account.emailVerified, csrf_token: session.csrfToken } satisfies SessionAnswer);
      },
  },
  {
    method: 'get',
    path: '/keys',
    summary: 'The account\'s keys',
    status: 200,
    answer: keysAnswer,
    errors: SESSION_ERRORS,
    handler: (s) =>
      async function listKeysRoute(req, res) {
        res.json({ status: 'success', keys: await s.keys.list(accountOf(req)) } satisfies KeysAnswer);
      },
  },
  {
    method: 'post',
    path: '/keys',
    summary: 'Create a key (the previous one is deactivated)',
    status: 201,
    answer: keyAnswer,
    errors: [...SESSION_ERRORS, ErrorCode.INVALID_INPUT],
    body: keyNameBody,
    handler: (s) =>
      async function createKeyRoute(req, res) {
        const { name } = inputOf(req, keyNameBody);
        res.setHeader('Cache-Control', 'no-store');
        res.status(201).json({ status: 'success', key: await s.keys.create(accountOf(req), name) } satisfies KeyAnswer);
      },
  },
  {
    method: 'post',
    path: '/keys/reveal',
    summary: 'The active key in plain text (the password again on an old session)',
    status: 200,
    answer: keyAnswer,
    errors: [...SESSION_ERRORS, ErrorCode.INVALID_INPUT, ErrorCode.REAUTH_REQUIRED],
    body: revealBody,
    handler: (s) =>
      async function revealKeyRoute(req, res) {
        const session = sessionOf(req);
        const { password } = inputOf(req, revealBody);
        if (Date.now() - session.authenticatedAt.getTime() > REVEAL_REAUTH_AFTER_MS) {
          const hash = await s.sessions.passwordHashOf(session.userId);
          if (!password || !hash || !(await verifyPassword(password, hash))) throw new ApiError(ErrorCode.REAUTH_REQUIRED);
          await s.sessions.markAuthenticated(session.idHash);
        }
        const key = await s.keys.reveal(session.accountId);
        if (!key) throw new ApiError(ErrorCode.INVALID_INPUT, { message: 'There is no active key to reveal. Create one first.' });
        res.setHeader('Cache-Control', 'no-store');
        res.json({ status: 'success', key } satisfies KeyAnswer);
      },
  },
  {
    method: 'post',
    path: '/keys/revoke',
    summary: 'Revoke the active key',
    status: 200,
    answer: doneAnswer,
    errors: [...SESSION_ERRORS, ErrorCode.INVALID_INPUT],
    handler: (s) =>
      async function revokeKeyRoute(req, res) {
        const revoked = await s.keys.revoke(accountOf(req));
        if (!revoked) throw new ApiError(ErrorCode.INVALID_INPUT, { message: 'There is no active key to revoke.' });
        res.json({ status: 'success' });
      },
  },
  {
    method: 'post',
    path: '/keys/replace',
    summary: 'Replace the active key with a new one of the same name',
    status: 201,
    answer: keyAnswer,
    errors: [...SESSION_ERRORS, ErrorCode.INVALID_INPUT],
    handler: (s) =>
      async function replaceKeyRoute(req, res) {
        const accountId = accountOf(req);
        const active = (await s.keys.list(accountId)).find((k) => k.status === 'active');
        if (!active) throw new ApiError(ErrorCode.INVALID_INPUT, { message: 'There is no active key to replace. Create one instead.' });
        res.setHeader('Cache-Control', 'no-store');
        res.status(201).json({ status: 'success', key: await s.keys.create(accountId, active.name) } satisfies KeyAnswer);
      },
  },
  {
    method: 'get',
    path: '/usage',
    summary: 'Balance, caps and this month\'s spend',
    status: 200,
    answer: usageAnswerSchema.extend({ status: doneAnswer.shape.status }),
    errors: SESSION_ERRORS,
    handler: (s) =>
      async function usageRoute(req, res) {
        res.json({ status: 'success', ...(await usageSummary(s, accountOf(req))), payments: s.payments.howItWorks } satisfies UsageAnswer & { status: 'success' });
      },
  },
  {
    method: 'get',
    path: '/ledger',
    summary: 'Charges and refunds, newest first, one page',
    status: 200,
    answer: ledgerAnswer,
    errors: SESSION_ERRORS,
    query: ledgerQuery,
    handler: (s) =>
      async function ledgerRoute(req, res) {
        const { page } = inputOf(req, ledgerQuery);
        res.json({ status: 'success', ...(await ledgerPage(s.db, accountOf(req), page)) } satisfies LedgerAnswer);
      },
  },
  {
    method: 'get',
    path: '/payments',
    summary: 'The account\'s upgrade and top-off requests',
    status: 200,
    answer: paymentsAnswer,
    errors: SESSION_ERRORS,
    handler: (s) =>
      async function paymentsRoute(req, res) {
        res.json({ status: 'success', requests: await s.payments.list(accountOf(req)), how_it_works: s.payments.howItWorks } satisfies PaymentsAnswer);
      },
  },
  {
    method: 'post',
    path: '/payments',
    summary: 'Request an upgrade or a top-off',
    status: 201,
    answer: paymentAnswer,
    errors: [...SESSION_ERRORS, ErrorCode.INVALID_INPUT, ErrorCode.PAYMENTS_PENDING],
    body: paymentBody,
    handler: (s) =>
      async function requestPaymentRoute(req, res) {
        const body = inputOf(req, paymentBody);
        const ask = body.kind === 'upgrade' ? { kind: body.kind, tier: body.tier } : { kind: body.kind, amountMicro: parseUsd(body.amount_usd) };
        res.status(201).json({ status: 'success', request: await s.payments.request(accountOf(req), ask) } satisfies PaymentAnswer);
      },
  },
  {
    method: 'get',
    path: '/tables',
    summary: 'The public tables and the account\'s ready sheets',
    status: 200,
    answer: tablesAnswer,
    errors: SESSION_ERRORS,
    handler: (s) =>
      async function tablesRoute(req, res) {
        const sheets = (await listDatasets(s.db, accountOf(req))).filter((d) => d.status === 'ready');
        res.json({
          status: 'success',
          tables: SOURCES.flatMap((src) => src.tables.map((t) => ({ name: t.name, source: src.id, description: t.description, columns: [] }))),
          sheets: sheets.map((d) => ({ slug: d.slug, table: sqlNameOf(d.slug), columns: d.columns ?? [] })),
        } satisfies TablesAnswer);
      },
  },
];

/** A public route behind the session instead of a key: its own declaration, handlers and validation, under /dashboard/api. */
function behindSession(route: RouteDeclaration, from: string, to: string): RouteDeclaration {
  const path = String(route.path).replace(from, to);
  const doc = route.doc && {
    ...route.doc,
    path: route.doc.path.replace(from, `${PREFIX}${to}`),
    operationId: `dashboard${route.doc.operationId.charAt(0).toUpperCase()}${route.doc.operationId.slice(1)}`,
  };
  return { ...route, path, doc, internal: INTERNAL, handlers: (s) => [...signedIn(s), ...route.handlers(s)] };
}

const postQuery = queryRoutes.filter((r) => r.method === 'post' && r.path === '/api/v1/query');

/** Every route under /dashboard/api, in one list. */
export const SESSION_ROUTES: readonly RouteDeclaration[] = [
  ...OWN_ROUTES.map(declare),
  // Sheets and SQL: the public routes' handler chains, behind the session instead of a key.
  ...datasetRoutes.map((r) => behindSession(r, '/api/v1/datasets', '/datasets')),
  ...postQuery.map((r) => behindSession(r, '/api/v1/query', '/query')),
];

/** The session routes on one router, each behind the flat error style; mounted at /dashboard/api by `app.ts`. */
export function sessionRouter(services: Services): Router {
  const router = express.Router();
  router.use(function flatStyle(req, _res, next) {
    setStyle(req, 'flat');
    next();
  });
  for (const route of SESSION_ROUTES) router[route.method](route.path, ...buildRoute(route, services).handlers);
  return router;
}
