/**
 * The in-process cache of verified keys (so a request costs no database round trip): lookup hash → resolved key, so an authenticated
 * request needs no PostgreSQL. Never keyed by the plain key.
 *
 * - Bounded: least recently used entries go first. Unknown keys live in their own, shorter-lived
 *   map, so a flood of random keys can neither evict real ones nor reach PostgreSQL more than once
 *   per key and `negativeTtlMs`.
 * - Invalidated by account: every key or tier change is announced (`changes.ts`) and drops that
 *   account's entries on every pod. The TTL is only the safety net for a lost message; while the
 *   announcements can't reach this pod, entries older than `fallbackTtlMs` are not trusted.
 */
import type { ResolvedKey } from './resolved-key.ts';

export interface KeyCacheOptions {
  /** Entries per map (verified keys; unknown keys). */
  readonly size: number;
  readonly ttlMs: number;
  /** How long an entry is trusted while announcements can't arrive. */
  readonly fallbackTtlMs: number;
  readonly negativeTtlMs: number;
}

interface Entry<T> {
  readonly value: T;
  readonly at: number;
}

/** A Map kept in use order: a hit moves to the end, the front is evicted. */
class Lru<T> {
  readonly #entries = new Map<string, Entry<T>>();
  readonly #size: number;

  constructor(size: number) {
    this.#size = size;
  }

  get(key: string): Entry<T> | undefined {
    const entry = this.#entries.get(key);
    if (entry) {
      this.#entries.delete(key);
      this.#entries.set(key, entry);
    }
    return entry;
  }

  /** Returns the evicted key and value, if the map was full. */
  set(key: string, value: T, at: number): { key: string; value: T } | undefined {
    this.#entries.delete(key);
    let evicted: { key: string; value: T } | undefined;
    if (this.#entries.size >= this.#size) {
      const [oldest, entry] = this.#entries.entries().next().value as [string, Entry<T>];
      this.#entries.delete(oldest);
      evicted = { key: oldest, value: entry.value };
    }
    this.#entries.set(key, { value, at });
    return evicted;
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }
}

export class KeyCache {
  readonly #known: Lru<ResolvedKey>;
  readonly #unknown: Lru<true>;
  /** accountId → the hashes cached for it, so an announcement can drop them without a scan. */
  readonly #hashesOf = new Map<string, Set<string>>();
  readonly #options: KeyCacheOptions;
  /** Bumped by every invalidation: a lookup that started before one must not store its answer. */
  #generation = 0;

  constructor(options: KeyCacheOptions) {
    this.#options = options;
    this.#known = new Lru(options.size);
    this.#unknown = new Lru(options.size);
  }

  get generation(): number {
    return this.#generation;
  }

  /** The cached answer (a key, or `null` for a known-unknown key), or undefined on a miss. */
  get(hash: string, { now, trusted }: { now: number; trusted: boolean }): ResolvedKey | null | undefined {
    const ttl = trusted ? this.#options.ttlMs : Math.min(this.#options.ttlMs, this.#options.fallbackTtlMs);
    const known = this.#known.get(hash);
    if (known && now - known.at < ttl) return known.value;
    const unknown = this.#unknown.get(hash);
    if (unknown && now - unknown.at < Math.min(ttl, this.#options.negativeTtlMs)) return null;
    return undefined;
  }

  /** Stores a lookup's answer unless an invalidation happened since `generation` was read. */
  set(hash: string, value: ResolvedKey | undefined, { now, generation }: { now: number; generation: number }): void {
    if (generation !== this.#generation || this.#options.ttlMs <= 0) return;
    if (!value) {
      this.#unknown.set(hash, true, now);
      return;
    }
    this.#unknown.delete(hash);
    const evicted = this.#known.set(hash, value, now);
    // The index follows the cache, so it is bounded by the same size.
    if (evicted) this.#unindex(evicted.value.accountId, evicted.key);
    const hashes = this.#hashesOf.get(value.accountId) ?? new Set<string>();
    hashes.add(hash);
    this.#hashesOf.set(value.accountId, hashes);
  }

  /**
   * An account's keys or tier changed: drop its entries. Unknown keys go too, since the change may
   * have created the key someone tried a moment ago. Without an account, everything goes.
   */
  invalidate(accountId?: string): void {
    this.#generation++;
    this.#unknown.clear();
    if (accountId === undefined) {
      this.#known.clear();
      this.#hashesOf.clear();
      return;
    }
    for (const hash of this.#hashesOf.get(accountId) ?? []) this.#known.delete(hash);
    this.#hashesOf.delete(accountId);
  }

  #unindex(accountId: string, hash: string): void {
    const hashes = this.#hashesOf.get(accountId);
    hashes?.delete(hash);
    if (hashes?.size === 0) this.#hashesOf.delete(accountId);
  }
}
