/**
 * The single-use tokens in verification and password-reset links (DECISIONS §5 "Email"). A token
 * is 32 random bytes, sent once in the link and stored only as its SHA-256, like session ids; it
 * expires (verification after 24 hours, reset after 1 hour) and is spent by the one UPDATE that
 * accepts it, so two uses at once cannot both succeed.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../../db/index.ts';
import { ApiError } from '../../errors/api-error.ts';
import { ErrorCode } from '../../errors/codes.ts';
import { normaliseEmail } from '../store.ts';

export type TokenPurpose = 'verify' | 'reset';

export const EMAIL_TOKEN_TTL_S: Readonly<Record<TokenPurpose, number>> = { verify: 24 * 60 * 60, reset: 60 * 60 };

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Why a link was refused, in words a person can act on. */
const REFUSAL = {
  expired: 'This link has expired. Ask for a new one.',
  used: 'This link was used already. Ask for a new one if you still need it.',
  unknown: 'This link is not valid. Check that it was copied whole, or ask for a new one.',
} as const;

export class EmailTokens {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /** A new token for the user; returns it in plain text for the link (never stored). */
  async issue(userId: string, purpose: TokenPurpose, now = new Date()): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await this.#db('email_tokens').insert({ token_hash: sha256(token), user_id: userId, purpose, created_at: now, expires_at: expiry(purpose, now) });
    return token;
  }

  /**
   * A reset token for the user with this email, in one statement that does the same work whether
   * or not the email has a user (it inserts one row or none): undefined when it has none.
   * `RETURNING` is only there to count the row.
   */
  async issueForEmail(email: string, purpose: TokenPurpose, now = new Date()): Promise<{ token: string } | undefined> {
    const token = randomBytes(32).toString('base64url');
    const { rows } = await this.#db.raw<{ rows: { user_id: string }[] }>(
      `INSERT INTO email_tokens (token_hash, user_id, purpose, created_at, expires_at)
       SELECT ?, id, ?, ?, ? FROM dashboard_users WHERE email = ?
       RETURNING user_id`,
      [sha256(token), purpose, now, expiry(purpose, now), normaliseEmail(email)],
    );
    return rows.length ? { token } : undefined;
  }

  /**
   * Spends the token and returns its user; every other unused token of the same purpose for that
   * user is dropped with it (one link works, the older ones stop). Throws EMAIL_LINK_INVALID,
   * saying whether it expired, was used or is unknown.
   */
  async consume(token: string, purpose: TokenPurpose, now = new Date()): Promise<string> {
    const hash = sha256(token);
    const spent = await this.#db('email_tokens')
      .where({ token_hash: hash, purpose })
      .whereNull('used_at')
      .andWhere('expires_at', '>', now)
      .update({ used_at: now })
      .returning('user_id');
    const userId = spent[0]?.user_id as string | undefined;
    if (userId) {
      await this.#db('email_tokens').where({ user_id: userId, purpose }).whereNull('used_at').delete();
      return userId;
    }
    const row = await this.#db('email_tokens').where({ token_hash: hash, purpose }).first('used_at');
    const reason = !row ? 'unknown' : row.used_at ? 'used' : 'expired';
    throw new ApiError(ErrorCode.EMAIL_LINK_INVALID, { message: REFUSAL[reason] });
  }
}

function expiry(purpose: TokenPurpose, now: Date): Date {
  return new Date(now.getTime() + EMAIL_TOKEN_TTL_S[purpose] * 1000);
}
