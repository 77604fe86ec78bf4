/**
 * Sign-up and sign-in as plain functions (the routes only translate HTTP). A new user gets a new
 * Free account with its monthly grant, its email not verified yet; every successful sign-in or
 * sign-up starts a new session.
 */
import type { AccountStore } from '../../accounts/store.ts';
import type { Db } from '../../db/index.ts';
import { ApiError } from '../../errors/api-error.ts';
import { ErrorCode } from '../../errors/codes.ts';
import { dummyHash, hashPassword, verifyPassword } from './passwords.ts';
import type { DashboardUser, SessionStore } from '../store.ts';

export interface AuthDeps {
  readonly db: Db;
  readonly accounts: AccountStore;
  readonly sessions: SessionStore;
}

/**
 * Returns the new session id. 409 when the email already has a user. `signupAddress`: the hashed
 * address it came from, which shares one runner-time budget among its Free accounts (DECISIONS §4).
 */
export async function signUp(deps: AuthDeps, email: string, password: string, signupAddress: string): Promise<{ sessionId: string; user: DashboardUser }> {
  if (await deps.sessions.emailTaken(email)) throw new ApiError(ErrorCode.EMAIL_TAKEN);
  const passwordHash = await hashPassword(password);
  // Self-serve: unverified until the link sent to the email is opened (DECISIONS §5 "Email").
  const account = await deps.accounts.create({ email, tier: 'free', emailVerified: false, signupAddress });
  const user = await deps.sessions.createUser({ accountId: account.id, email, passwordHash });
  if (!user) {
    // A concurrent sign-up took the email between the check and the insert: undo our account.
    await deps.db('accounts').where({ id: account.id }).delete();
    throw new ApiError(ErrorCode.EMAIL_TAKEN);
  }
  return { sessionId: await deps.sessions.createSession(user.id), user };
}

/** Returns the new session id; one 401 for an unknown email and a wrong password alike. */
export async function signIn(deps: AuthDeps, email: string, password: string): Promise<{ sessionId: string; user: DashboardUser }> {
  const user = await deps.sessions.userByEmail(email);
  const ok = await verifyPassword(password, user?.passwordHash ?? (await dummyHash()));
  if (!user || !ok) throw new ApiError(ErrorCode.SIGNIN_FAILED);
  return { sessionId: await deps.sessions.createSession(user.id), user };
}
