/**
 * Signing up, in and out, the session itself, and the email links (DECISIONS §5 "Email", §10):
 * the session routes of an account's access. The flows are plain functions (`auth.ts`,
 * `email-flows.ts`); these routes translate HTTP in and out.
 */
import type { Request, Response } from 'express';
import type { AccountStore } from '../../accounts/store.ts';
import type { ApiConfig } from '../../config.ts';
import type { Db } from '../../db/index.ts';
import { ErrorCode } from '../../errors/codes.ts';
import type { MailQueue } from '../../mail/mailer.ts';
import { publicOrigin } from '../../mail/messages.ts';
import { clientIp } from '../../request-context.ts';
import { type RouteDeclaration, declareRoute } from '../../routes/declare.ts';
import { inputOf } from '../../routes/validate.ts';
import { sessionOf } from '../middleware.ts';
import { SESSION_ERRORS, sessionDoc } from '../declare.ts';
import { credentialsBody, doneAnswer, emailAnswer, type EmailAnswer, forgotBody, resetBody, sessionAnswer, type SessionAnswer, signedInAnswer, type SignedInAnswer, signinBody, verifyBody } from '../schemas.ts';
import type { Session, SessionStore } from '../store.ts';
import { signIn, signUp } from './auth.ts';
import { clearSessionCookie, sessionIdOf, setSessionCookie } from './cookies.ts';
import type { EmailLimit } from './email-limit.ts';
import { requestPasswordReset, resendVerification, resetPassword, sendVerification, verifyEmail } from './email-flows.ts';
import type { EmailTokens } from './email-tokens.ts';
import type { SigninLimit } from './signin-limit.ts';

export interface AuthRouteDeps {
  readonly config: Pick<ApiConfig, 'PUBLIC_URL'>;
  readonly db: Db;
  readonly accounts: AccountStore;
  readonly sessions: SessionStore;
  readonly emailTokens: EmailTokens;
  readonly emailLimit: EmailLimit;
  readonly signinLimit: SigninLimit;
  readonly mail: MailQueue;
  readonly signupAddressOf: (address: string) => string;
}

const authDeps = (s: AuthRouteDeps) => ({ db: s.db, accounts: s.accounts, sessions: s.sessions });
const emailDeps = (s: AuthRouteDeps) => ({ accounts: s.accounts, sessions: s.sessions, tokens: s.emailTokens, mail: s.mail });
const originOf = (s: AuthRouteDeps, req: Request) => publicOrigin(s.config.PUBLIC_URL, req);

/** One answer for every email, known or not. */
const FORGOT_ANSWER = 'If an account uses this email, a link to reset its password is on its way. It works once, for 1 hour.';

/** Signing up or in always starts a new session and ends the one the browser had (rotation). */
async function startSession(sessions: SessionStore, req: Request, res: Response, sessionId: string): Promise<void> {
  const previous = sessionIdOf(req);
  if (previous) await sessions.deleteSession(previous);
  setSessionCookie(req, res, sessionId);
}

/** What the dashboard shows of the signed-in session, with the CSRF token its changes send back. */
async function sessionSummary(accounts: AccountStore, session: Session): Promise<SessionAnswer> {
  const account = await accounts.mustGet(session.accountId);
  return { status: 'success', email: session.email, tier: account.tier, email_verified: account.emailVerified, csrf_token: session.csrfToken };
}

const signup = declareRoute<AuthRouteDeps>({
  method: 'post',
  path: '/signup',
  visibility: 'session',
  sessionless: true,
  style: 'flat',
  doc: sessionDoc({
    method: 'post',
    path: '/signup',
    summary: 'Sign up: a Free account and a session',
    status: 201,
    answer: signedInAnswer,
    errors: [ErrorCode.INVALID_INPUT, ErrorCode.EMAIL_TAKEN, ErrorCode.SIGNIN_RATE_LIMITED],
    body: credentialsBody,
  }),
  handler: (s) =>
    async function signUpRoute(req, res) {
      const body = inputOf(req, credentialsBody);
      await s.signinLimit.signUp(req);
      const { sessionId, user } = await signUp(authDeps(s), body.email, body.password, s.signupAddressOf(clientIp(req)));
      await sendVerification(emailDeps(s), user, originOf(s, req));
      await startSession(s.sessions, req, res, sessionId);
      res.status(201).json({ status: 'success', email: user.email } satisfies SignedInAnswer);
    },
});

const signin = declareRoute<AuthRouteDeps>({
  method: 'post',
  path: '/signin',
  visibility: 'session',
  sessionless: true,
  style: 'flat',
  doc: sessionDoc({
    method: 'post',
    path: '/signin',
    summary: 'Sign in: a new session',
    status: 200,
    answer: signedInAnswer,
    errors: [ErrorCode.INVALID_INPUT, ErrorCode.SIGNIN_FAILED, ErrorCode.SIGNIN_RATE_LIMITED],
    body: signinBody,
  }),
  handler: (s) =>
    async function signInRoute(req, res) {
      const body = inputOf(req, signinBody);
      const { sessionId, user } = await s.signinLimit.signIn(req, body.email, () => signIn(authDeps(s), body.email, body.password));
      await startSession(s.sessions, req, res, sessionId);
      res.json({ status: 'success', email: user.email } satisfies SignedInAnswer);
    },
});

/** Verified sign-up and password reset by email (DECISIONS §5 "Email"): the flows are `email-flows.ts`. */
const EMAIL_ROUTES: readonly RouteDeclaration<AuthRouteDeps>[] = [
  declareRoute<AuthRouteDeps>({
    method: 'post',
    path: '/email/resend',
    visibility: 'session',
    style: 'flat',
    doc: sessionDoc({
      method: 'post',
      path: '/email/resend',
      summary: 'Send the verification link again',
      status: 202,
      answer: emailAnswer,
      errors: [...SESSION_ERRORS, ErrorCode.INVALID_INPUT, ErrorCode.EMAIL_RATE_LIMITED],
    }),
    handler: (s) =>
      async function resendRoute(req, res) {
        const session = sessionOf(req);
        await s.emailLimit.verification(req, session.accountId);
        await resendVerification(emailDeps(s), { id: session.userId, email: session.email, accountId: session.accountId }, originOf(s, req));
        res.status(202).json({ status: 'success', message: `We sent a new link to ${session.email}.` } satisfies EmailAnswer);
      },
  }),
  declareRoute<AuthRouteDeps>({
    method: 'post',
    path: '/email/verify',
    visibility: 'session',
    sessionless: true,
    style: 'flat',
    doc: sessionDoc({
      method: 'post',
      path: '/email/verify',
      summary: 'Verify the email with the token of the link sent to it (no session needed)',
      status: 200,
      answer: emailAnswer,
      errors: [ErrorCode.INVALID_INPUT, ErrorCode.EMAIL_LINK_INVALID],
      body: verifyBody,
    }),
    handler: (s) =>
      async function verifyRoute(req, res) {
        const email = await verifyEmail(emailDeps(s), inputOf(req, verifyBody).token);
        res.json({ status: 'success', message: `${email} is verified: SQL, exports and sheet uploads are open to your keys.` } satisfies EmailAnswer);
      },
  }),
  declareRoute<AuthRouteDeps>({
    method: 'post',
    path: '/password/forgot',
    visibility: 'session',
    sessionless: true,
    style: 'flat',
    doc: sessionDoc({
      method: 'post',
      path: '/password/forgot',
      summary: 'Email a password-reset link (the same answer whether or not the email has an account)',
      status: 202,
      answer: emailAnswer,
      errors: [ErrorCode.INVALID_INPUT, ErrorCode.EMAIL_RATE_LIMITED],
      body: forgotBody,
    }),
    handler: (s) =>
      async function forgotRoute(req, res) {
        const { email } = inputOf(req, forgotBody);
        await s.emailLimit.reset(req, email);
        requestPasswordReset(emailDeps(s), email, originOf(s, req));
        res.status(202).json({ status: 'success', message: FORGOT_ANSWER } satisfies EmailAnswer);
      },
  }),
  declareRoute<AuthRouteDeps>({
    method: 'post',
    path: '/password/reset',
    visibility: 'session',
    sessionless: true,
    style: 'flat',
    doc: sessionDoc({
      method: 'post',
      path: '/password/reset',
      summary: 'Set a new password with the token of the reset link; every session of the account ends',
      status: 200,
      answer: emailAnswer,
      errors: [ErrorCode.INVALID_INPUT, ErrorCode.EMAIL_LINK_INVALID],
      body: resetBody,
    }),
    handler: (s) =>
      async function resetRoute(req, res) {
        const { token, password } = inputOf(req, resetBody);
        await resetPassword(emailDeps(s), token, password);
        // This browser's session, if any, ended with the others: its cookie goes too.
        clearSessionCookie(req, res);
        res.json({ status: 'success', message: 'Your password is changed and every session has ended. Sign in with the new password.' } satisfies EmailAnswer);
      },
  }),
];

const signout = declareRoute<Pick<AuthRouteDeps, 'sessions'>>({
  method: 'post',
  path: '/signout',
  visibility: 'session',
  style: 'flat',
  doc: sessionDoc({ method: 'post', path: '/signout', summary: 'Sign out: the session ends server-side', status: 200, answer: doneAnswer, errors: SESSION_ERRORS }),
  handler: (s) =>
    async function signOutRoute(req, res) {
      const id = sessionIdOf(req);
      if (id) await s.sessions.deleteSession(id);
      clearSessionCookie(req, res);
      res.json({ status: 'success' });
    },
});

const session = declareRoute<Pick<AuthRouteDeps, 'accounts'>>({
  method: 'get',
  path: '/session',
  visibility: 'session',
  style: 'flat',
  doc: sessionDoc({ method: 'get', path: '/session', summary: 'The signed-in account and its CSRF token', status: 200, answer: sessionAnswer, errors: SESSION_ERRORS }),
  handler: (s) =>
    async function sessionRoute(req, res) {
      res.setHeader('Cache-Control', 'no-store');
      res.json(await sessionSummary(s.accounts, sessionOf(req)));
    },
});

/** In the order the dashboard's session API has always listed them. */
export const authRoutes: readonly RouteDeclaration<AuthRouteDeps>[] = [signup, signin, ...EMAIL_ROUTES, signout, session];
