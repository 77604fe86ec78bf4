/**
 * The dashboard's key actions on the account's active key, as plain functions: the routes
 * (`routes.ts`) only translate HTTP in and out.
 */
import { ApiError } from '../../errors/api-error.ts';
import { ErrorCode } from '../../errors/codes.ts';
import type { KeyStore } from '../../keys/store.ts';
import { verifyPassword } from '../auth/passwords.ts';
import type { Session, SessionStore } from '../store.ts';

/** Reveal asks for the password again when it was last checked longer ago than this. */
export const REVEAL_REAUTH_AFTER_MS = 5 * 60 * 1000;

/**
 * The active key in plain text. A session whose password was checked longer ago than
 * `REVEAL_REAUTH_AFTER_MS` must give it again (403 REAUTH_REQUIRED otherwise), and counts as
 * checked from then on.
 */
export async function revealActiveKey(deps: { keys: KeyStore; sessions: SessionStore }, session: Session, password: string | undefined, now = Date.now()): Promise<string> {
  if (now - session.authenticatedAt.getTime() > REVEAL_REAUTH_AFTER_MS) {
    const hash = await deps.sessions.passwordHashOf(session.userId);
    if (!password || !hash || !(await verifyPassword(password, hash))) throw new ApiError(ErrorCode.REAUTH_REQUIRED);
    await deps.sessions.markAuthenticated(session.idHash);
  }
  const key = await deps.keys.reveal(session.accountId);
  if (!key) throw new ApiError(ErrorCode.INVALID_INPUT, { message: 'There is no active key to reveal. Create one first.' });
  return key;
}

/** Revokes the active key; 400 when there is none. */
export async function revokeActiveKey(keys: KeyStore, accountId: string): Promise<void> {
  const revoked = await keys.revoke(accountId);
  if (!revoked) throw new ApiError(ErrorCode.INVALID_INPUT, { message: 'There is no active key to revoke.' });
}

/** A new key of the active key's name, which it replaces; 400 when there is no active key. */
export async function replaceActiveKey(keys: KeyStore, accountId: string): Promise<string> {
  const active = (await keys.list(accountId)).find((k) => k.status === 'active');
  if (!active) throw new ApiError(ErrorCode.INVALID_INPUT, { message: 'There is no active key to replace. Create one instead.' });
  return keys.create(accountId, active.name);
}
