/**
 * Verified sign-up and password reset by email as plain functions (DECISIONS §5 "Email"); the
 * session routes only translate HTTP, and check the limits (`email-limit.ts`) first. `origin` is
 * where the links point (`publicOrigin`).
 */
import type { AccountStore } from '../../accounts/store.ts';
import { ApiError } from '../../errors/api-error.ts';
import { ErrorCode } from '../../errors/codes.ts';
import type { MailQueue } from '../../mail/mailer.ts';
import { resetEmail, resetLink, verificationEmail, verifyLink } from '../../mail/messages.ts';
import type { EmailTokens } from './email-tokens.ts';
import { hashPassword } from './passwords.ts';
import { type DashboardUser, type SessionStore, normaliseEmail } from '../store.ts';

export interface EmailDeps {
  readonly accounts: AccountStore;
  readonly sessions: SessionStore;
  readonly tokens: EmailTokens;
  readonly mail: MailQueue;
}

/** A new verification link for the user, on its way in the background. */
export async function sendVerification(deps: EmailDeps, user: Pick<DashboardUser, 'id' | 'email'>, origin: string): Promise<void> {
  const token = await deps.tokens.issue(user.id, 'verify');
  deps.mail.post(verificationEmail(user.email, verifyLink(origin, token)));
}

/** Resend: 400 when the account is verified already (nothing to send). */
export async function resendVerification(deps: EmailDeps, user: Pick<DashboardUser, 'id' | 'email' | 'accountId'>, origin: string): Promise<void> {
  if ((await deps.accounts.mustGet(user.accountId)).emailVerified) {
    throw new ApiError(ErrorCode.INVALID_INPUT, { message: 'Your email is verified already.' });
  }
  await sendVerification(deps, user, origin);
}

/** Spends the link's token and marks the account verified; returns the verified email. */
export async function verifyEmail(deps: EmailDeps, token: string): Promise<string> {
  const user = await userOfToken(deps, await deps.tokens.consume(token, 'verify'));
  await deps.accounts.markEmailVerified(user.accountId);
  return user.email;
}

/**
 * "Forgot password": the request only hands the email to the background, so its answer and its
 * timing are the same whether or not the email has an account. There, one statement stores a
 * token or nothing, and only an account gets the email.
 */
export function requestPasswordReset(deps: EmailDeps, email: string, origin: string): void {
  deps.mail.later(async () => {
    const issued = await deps.tokens.issueForEmail(email, 'reset');
    // Users are stored by their normalised email, so that is the address: no second lookup.
    return issued && resetEmail(normaliseEmail(email), resetLink(origin, issued.token));
  });
}

/**
 * Spends the reset token, sets the new password and ends every session of the account. The link
 * came to the account's mailbox, so the email counts as verified too.
 */
export async function resetPassword(deps: EmailDeps, token: string, password: string): Promise<void> {
  // Hashed first: a token is spent only when the new password can be stored at once.
  const passwordHash = await hashPassword(password);
  const user = await userOfToken(deps, await deps.tokens.consume(token, 'reset'));
  await deps.sessions.setPasswordEndingSessions(user.id, passwordHash);
  await deps.accounts.markEmailVerified(user.accountId);
}

async function userOfToken(deps: EmailDeps, userId: string): Promise<DashboardUser> {
  const user = await deps.sessions.userById(userId);
  // A token's user is deleted with it (ON DELETE CASCADE): only a race with a deletion lands here.
  if (!user) throw new ApiError(ErrorCode.EMAIL_LINK_INVALID);
  return user;
}
