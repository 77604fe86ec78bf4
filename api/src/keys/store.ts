/**
 * API keys (DECISIONS §5). One active key per account, enforced by a partial unique index; creating
 * a key deactivates the previous one in the same transaction.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../db/index.ts';
import { KeyCache, type KeyCacheOptions } from './cache.ts';
import type { ResolvedKey } from './resolved-key.ts';
import { type KeyChanges, LocalKeyChanges } from './changes.ts';
import { hashOnConnection } from './connection-hash.ts';
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

export type { ResolvedKey } from './resolved-key.ts';

/** last_used_at is coarse: at most one write per key and minute, across pods (the SQL guard). */
const TOUCH_INTERVAL_MS = 60_000;

export interface KeyStoreOptions {
  /** Verified keys kept in memory; see `cache.ts`. Defaults suit tests: nothing cached. */
  readonly cache?: Partial<KeyCacheOptions>;
  /** Where key and tier changes are announced to every pod. */
  readonly changes?: KeyChanges;
  /** How often the used keys' last_used_at is written, in one UPDATE. */
  readonly usageFlushMs?: number;
}

export class KeyStore {
  readonly #db: Db;
  readonly #crypto: KeyCrypto;
  readonly #cache: KeyCache;
  readonly #changes: KeyChanges;
  /** keyId → last time this process queued last_used_at, so a busy key is written once a minute. */
  readonly #touched = new Map<string, number>();
  /** keyId → when it was used, waiting for the next batched write. */
  #used = new Map<string, number>();
  readonly #flushTimer: NodeJS.Timeout;
  /** The key's lookup hash, as one function made once (`hashOnConnection` takes it on every request). */
  readonly #lookupHash = (key: string): string => this.#crypto.lookupHash(key);

  constructor(db: Db, crypto: KeyCrypto, options: KeyStoreOptions = {}) {
    this.#db = db;
    this.#crypto = crypto;
    this.#cache = new KeyCache({ size: 10_000, ttlMs: 0, fallbackTtlMs: 1_000, negativeTtlMs: 2_000, ...options.cache });
    this.#changes = options.changes ?? new LocalKeyChanges();
    this.#changes.listen((accountId) => this.#cache.invalidate(accountId));
    // A failed write is not retried: last_used_at is informational, and the next use queues it again.
    this.#flushTimer = setInterval(() => void this.flushUsage().catch(() => undefined), options.usageFlushMs ?? 5_000).unref();
  }

  /**
   * An account's keys or tier changed (here or in `AccountStore.setTier`): every pod drops what it
   * cached for the account, this one before the announcement returns.
   */
  async changed(accountId: string): Promise<void> {
    await this.#changes.announce(accountId);
  }

  /** Creates a new active key, deactivating the previous one. Returns the plain key, shown once. */
  async create(accountId: string, name: string, key: string = generateKey()): Promise<string> {
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
    await this.changed(accountId);
    return key;
  }

  /** Brings an existing legacy `dk_` key over as the account's active key. */
  async importLegacy(accountId: string, name: string, key: string): Promise<void> {
    if (!isLegacyKey(key) || !looksLikeKey(key)) throw new RangeError('not a legacy key');
    await this.create(accountId, name, key);
  }

  async revoke(accountId: string): Promise<number> {
    const revoked = await this.#db('api_keys').where({ account_id: accountId, status: 'active' }).update({ status: 'revoked' });
    await this.changed(accountId);
    return revoked;
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

  /**
   * What `resolve` answers without PostgreSQL: the key, `null` for no valid key, undefined if it
   * must look. `connection`: the request's socket, which remembers the hash of the key it sent last
   * (`connection-hash.ts`).
   */
  cached(key: string, connection?: object): ResolvedKey | null | undefined {
    if (!looksLikeKey(key)) return null;
    const hash = hashOnConnection(connection, key, this.#lookupHash);
    return this.#cache.get(hash, { now: Date.now(), trusted: this.#changes.connected });
  }

  /** The active key's account, or undefined for anything else (invalid, revoked, deactivated). */
  async resolve(key: string): Promise<ResolvedKey | undefined> {
    const cached = this.cached(key);
    if (cached !== undefined) return cached ?? undefined;
    const hash = this.#crypto.lookupHash(key);
    const now = Date.now();
    const generation = this.#cache.generation;
    const row = await this.#db('api_keys as k')
      .join('accounts as a', 'a.id', 'k.account_id')
      .where({ 'k.lookup_hash': hash, 'k.status': 'active' })
      .first('k.id', 'k.account_id', 'k.legacy', 'a.tier', 'a.email_verified_at');
    const value: ResolvedKey | undefined = row
      ? { keyId: row.id, accountId: row.account_id, tier: row.tier, legacy: row.legacy, emailVerified: row.email_verified_at !== null }
      : undefined;
    this.#cache.set(hash, value, { now, generation });
    return value;
  }

  /** Notes a use; `flushUsage` writes it. At most once a minute per key and process. */
  touch(keyId: string, now = Date.now()): void {
    const last = this.#touched.get(keyId);
    if (last !== undefined && now - last < TOUCH_INTERVAL_MS) return;
    this.#touched.set(keyId, now);
    if (this.#touched.size > 10_000) this.#touched.clear();
    this.#used.set(keyId, now);
  }

  /**
   * Writes the noted uses in one UPDATE. The WHERE clause keeps the once-a-minute rule across pods.
   * Runs every `usageFlushMs`, and on shutdown (`close`).
   */
  async flushUsage(): Promise<void> {
    if (this.#used.size === 0) return;
    const used = this.#used;
    this.#used = new Map();
    const ids = [...used.keys()];
    const at = new Date(Math.max(...used.values()));
    await this.#db('api_keys')
      .whereIn('id', ids)
      .andWhere((q) => void q.whereNull('last_used_at').orWhere('last_used_at', '<', new Date(at.getTime() - TOUCH_INTERVAL_MS)))
      .update({ last_used_at: at });
  }

  /** Stops the timer and writes the last uses (the SIGTERM drain). */
  async close(): Promise<void> {
    clearInterval(this.#flushTimer);
    await this.flushUsage();
    await this.#changes.close();
  }
}
