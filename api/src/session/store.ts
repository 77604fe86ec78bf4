/**
 * Dashboard users and sessions (DECISIONS §5, §10). A session id is 32 random bytes, given to the
 * browser once in the cookie and stored only as its SHA-256; the CSRF token is stored with it
 * (synchronizer token). Signing in always makes a new session, so ids rotate at every sign-in.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Db } from '../db/index.ts';

export interface DashboardUser {
  readonly id: string;
  readonly accountId: string;
  readonly email: string;
  readonly passwordHash: string;
}

export interface Session {
  readonly idHash: string;
  readonly userId: string;
  readonly accountId: string;
  readonly email: string;
  readonly csrfToken: string;
  readonly createdAt: Date;
  /** The last time the password was checked (sign-in or re-entry for Reveal). */
  readonly authenticatedAt: Date;
}

export const SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export class SessionStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /** Undefined when the email is taken (the unique index decides, so concurrent sign-ups are safe). */
  async createUser(input: { accountId: string; email: string; passwordHash: string }, trx: Db = this.#db): Promise<DashboardUser | undefined> {
    const id = randomUUID();
    const rows = await trx('dashboard_users')
      .insert({ id, account_id: input.accountId, email: normaliseEmail(input.email), password_hash: input.passwordHash })
      .onConflict('email')
      .ignore()
      .returning('id');
    return rows.length ? { id, accountId: input.accountId, email: normaliseEmail(input.email), passwordHash: input.passwordHash } : undefined;
  }

  async emailTaken(email: string): Promise<boolean> {
    return Boolean(await this.#db('dashboard_users').where({ email: normaliseEmail(email) }).first('id'));
  }

  async userByEmail(email: string): Promise<DashboardUser | undefined> {
    return userOf(await this.#db('dashboard_users').where({ email: normaliseEmail(email) }).first());
  }

  /** A new session; returns the plain id for the cookie (never stored). */
  async createSession(userId: string, now = new Date()): Promise<string> {
    // Expired sessions are useless; drop the user's old ones whenever a new one starts.
    await this.#db('dashboard_sessions').where({ user_id: userId }).andWhere('expires_at', '<=', now).delete();
    const id = randomBytes(32).toString('base64url');
    await this.#db('dashboard_sessions').insert({
      id_hash: sha256(id),
      user_id: userId,
      csrf_token: randomBytes(32).toString('base64url'),
      created_at: now,
      authenticated_at: now,
      expires_at: new Date(now.getTime() + SESSION_TTL_MS),
    });
    return id;
  }

  async session(id: string, now = new Date()): Promise<Session | undefined> {
    const row = await this.#db('dashboard_sessions as s')
      .join('dashboard_users as u', 'u.id', 's.user_id')
      .where('s.id_hash', sha256(id))
      .andWhere('s.expires_at', '>', now)
      .first('s.id_hash', 's.user_id', 's.csrf_token', 's.created_at', 's.authenticated_at', 'u.account_id', 'u.email');
    if (!row) return undefined;
    return {
      idHash: row.id_hash,
      userId: row.user_id,
      accountId: row.account_id,
      email: row.email,
      csrfToken: row.csrf_token,
      createdAt: new Date(row.created_at),
      authenticatedAt: new Date(row.authenticated_at),
    };
  }

  async userById(id: string): Promise<DashboardUser | undefined> {
    return userOf(await this.#db('dashboard_users').where({ id }).first());
  }

  /** A password reset: the new hash, and every session of the user ends (together, or neither). */
  async setPasswordEndingSessions(userId: string, passwordHash: string): Promise<void> {
    await this.#db.transaction(async (trx) => {
      await trx('dashboard_users').where({ id: userId }).update({ password_hash: passwordHash });
      await trx('dashboard_sessions').where({ user_id: userId }).delete();
    });
  }

  async passwordHashOf(userId: string): Promise<string | undefined> {
    const row = await this.#db('dashboard_users').where({ id: userId }).first('password_hash');
    return row?.password_hash;
  }

  async markAuthenticated(idHash: string, now = new Date()): Promise<void> {
    await this.#db('dashboard_sessions').where({ id_hash: idHash }).update({ authenticated_at: now });
  }

  /** Sign-out (or rotation): the session ends server-side, whatever the browser keeps. */
  async deleteSession(id: string): Promise<void> {
    await this.#db('dashboard_sessions').where({ id_hash: sha256(id) }).delete();
  }
}

function userOf(row: { id: string; account_id: string; email: string; password_hash: string } | undefined): DashboardUser | undefined {
  return row && { id: row.id, accountId: row.account_id, email: row.email, passwordHash: row.password_hash };
}
