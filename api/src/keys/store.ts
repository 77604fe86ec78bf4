/**
 * API keys (DECISIONS §5). One active key per account, enforced by a partial unique index; creating
 * a key deactivates the previous one in the same transaction.
 */
import { randomUUID } from 'node:crypto';
import type { Tier } from '@uda/shared/catalog';
import type { Db } from '../db/index.ts';
import { type KeyCrypto, displayPrefix, generateKey, isLegacyKey, looksLikeKey } from './crypto.ts';

export type KeyStatus = 'active' | 'deactivated' | 'revoked';

export interface KeyListItem {
  name: string;
  prefix: string;
  status: KeyStatus;
  last_used_at: string | null;
  created_at: string;
  legacy: boolean;
}

export interface ResolvedKey {
  keyId: string;
  accountId: string;
  tier: Tier;
  legacy: boolean;
}

const TOUCH_INTERVAL_MS = 60_000;

export class KeyStore {
  readonly #db: Db;
  readonly #crypto: KeyCrypto;
  /** keyId → last time this process wrote last_used_at; the SQL guard covers other pods. */
  readonly #touched = new Map<string, number>();
  /**
   * lookup hash → resolved key, for `cacheTtlMs`. Saves a database round trip per request; the
   * price is that a key revoked (or a tier changed) through another pod's admin API keeps its old
   * meaning here for at most the TTL. Changes made through this process apply at once.
   */
  readonly #cache = new Map<string, { value: ResolvedKey | undefined; expires: number }>();
  readonly #cacheTtlMs: number;

  constructor(db: Db, crypto: KeyCrypto, options: { cacheTtlMs?: number } = {}) {
    this.#db = db;
    this.#crypto = crypto;
    this.#cacheTtlMs = options.cacheTtlMs ?? 0;
  }

  /** Drops every cached resolution (after a key, status or tier change in this process). */
  forget(): void {
    this.#cache.clear();
  }

  /** Creates a new active key, deactivating the previous one. Returns the plain key, shown once. */
  async create(accountId: string, name: string, key: string = generateKey()): Promise<string> {
    this.forget();
    await this.#db.transaction(async (trx) => {
      await trx('api_keys').where({ account_id: accountId, status: 'active' }).update({ status: 'deactivated' });
      await trx('api_keys').insert({
        id: randomUUID(),
        account_id: accountId,
        lookup_hash: this.#crypto.lookupHash(key),
        ciphertext: this.#crypto.encrypt(key),
        prefix: displayPrefix(key),
        name,
        status: 'active',
        legacy: isLegacyKey(key),
      });
    });
    return key;
  }

  /** Brings an existing legacy `dk_` key over as the account's active key. */
  async importLegacy(accountId: string, name: string, key: string): Promise<void> {
    if (!isLegacyKey(key) || !looksLikeKey(key)) throw new RangeError('not a legacy key');
    await this.create(accountId, name, key);
  }

  async revoke(accountId: string): Promise<number> {
    this.forget();
    return this.#db('api_keys').where({ account_id: accountId, status: 'active' }).update({ status: 'revoked' });
  }

  async list(accountId: string): Promise<KeyListItem[]> {
    const rows = await this.#db('api_keys')
      .where({ account_id: accountId })
      .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'status', order: 'asc' }])
      .select('name', 'prefix', 'status', 'last_used_at', 'created_at', 'legacy');
    return rows.map((r) => ({
      name: r.name,
      prefix: r.prefix,
      status: r.status,
      last_used_at: r.last_used_at ? new Date(r.last_used_at).toISOString() : null,
      created_at: new Date(r.created_at).toISOString(),
      legacy: r.legacy,
    }));
  }

  /** Reveal: the active key in plain text. */
  async reveal(accountId: string): Promise<string | undefined> {
    const row = await this.#db('api_keys').where({ account_id: accountId, status: 'active' }).first('ciphertext');
    return row ? this.#crypto.decrypt(row.ciphertext) : undefined;
  }

  /** The active key's account, or undefined for anything else (invalid, revoked, deactivated). */
  async resolve(key: string): Promise<ResolvedKey | undefined> {
    if (!looksLikeKey(key)) return undefined;
    const hash = this.#crypto.lookupHash(key);
    const now = Date.now();
    const cached = this.#cache.get(hash);
    if (cached && cached.expires > now) return cached.value;
    const row = await this.#db('api_keys as k')
      .join('accounts as a', 'a.id', 'k.account_id')
      .where({ 'k.lookup_hash': hash, 'k.status': 'active' })
      .first('k.id', 'k.account_id', 'k.legacy', 'a.tier');
    const value: ResolvedKey | undefined = row
      ? { keyId: row.id, accountId: row.account_id, tier: row.tier, legacy: row.legacy }
      : undefined;
    if (this.#cacheTtlMs > 0) {
      if (this.#cache.size >= 10_000) this.#cache.clear();
      this.#cache.set(hash, { value, expires: now + this.#cacheTtlMs });
    }
    return value;
  }

  /** Updates last_used_at at most once a minute per key, across pods (the WHERE clause). */
  async touch(keyId: string, now = Date.now()): Promise<void> {
    const last = this.#touched.get(keyId);
    if (last !== undefined && now - last < TOUCH_INTERVAL_MS) return;
    this.#touched.set(keyId, now);
    if (this.#touched.size > 10_000) this.#touched.clear();
    await this.#db('api_keys')
      .where({ id: keyId })
      .andWhere((q) => void q.whereNull('last_used_at').orWhere('last_used_at', '<', new Date(now - TOUCH_INTERVAL_MS)))
      .update({ last_used_at: new Date(now) });
  }
}
