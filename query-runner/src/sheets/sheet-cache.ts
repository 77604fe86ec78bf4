/**
 * Searches of one sheet version share its open copy: the download, the instance, the copy of the
 * Parquet, each row's terms and the term dictionary are built on the first search, not on every one
 * (they were most of a search's time). A sheet's key names one version and is never rewritten
 * (`sheets/<account>/<id>/<version>.parquet`), so an entry never goes stale: a changed sheet is a new
 * key, and the old version's entry ages out. Bounded in bytes (the engine's memory for the copy
 * plus the dictionary): the least recently used entries go first; one in use is closed when its last
 * search ends. A sheet larger than the bound is searched once and closed.
 */
import type { DuckDBInstance } from '@duckdb/node-api';

export interface OpenSheet<T> {
  readonly instance: DuckDBInstance;
  readonly prepared: T;
  readonly bytes: number;
}

interface Entry<T> {
  readonly sheet: OpenSheet<T>;
  users: number;
  cached: boolean;
}

export interface SheetCache<T> {
  /** Runs `work` on the key's open sheet, opening it with `open` when it is not held. */
  use<R>(key: string, open: () => Promise<OpenSheet<T>>, work: (sheet: OpenSheet<T>) => Promise<R>): Promise<R>;
  /** Bytes held by the cached sheets. */
  readonly bytes: number;
  /** Closes every sheet not in use; the ones in use close when their search ends. */
  clear(): void;
}

/** A cache of at most `maxBytes`; with 0, every search opens its own copy. */
export function createSheetCache<T>(maxBytes: number): SheetCache<T> {
  const entries = new Map<string, Entry<T>>();
  let bytes = 0;
  const closeIfIdle = (entry: Entry<T>) => {
    if (!entry.cached && entry.users === 0) entry.sheet.instance.closeSync();
  };
  const remove = (key: string, entry: Entry<T>) => {
    entries.delete(key);
    bytes -= entry.sheet.bytes;
    entry.cached = false;
    closeIfIdle(entry);
  };
  const admit = (key: string, entry: Entry<T>) => {
    if (entry.sheet.bytes > maxBytes || entries.has(key)) return;
    entries.set(key, entry);
    entry.cached = true;
    bytes += entry.sheet.bytes;
    for (const [oldest, held] of entries) {
      if (bytes <= maxBytes) break;
      remove(oldest, held);
    }
  };
  const take = (key: string): Entry<T> | undefined => {
    const entry = entries.get(key);
    if (entry) {
      // Most recently used last: the Map's order is the eviction order.
      entries.delete(key);
      entries.set(key, entry);
    }
    return entry;
  };
  return {
    async use(key, open, work) {
      // Two first searches of a sheet may both open it; the second copy serves its search and closes.
      const entry = take(key) ?? { sheet: await open(), users: 0, cached: false };
      entry.users++;
      if (!entry.cached) admit(key, entry);
      try {
        return await work(entry.sheet);
      } finally {
        entry.users--;
        closeIfIdle(entry);
      }
    },
    get bytes() {
      return bytes;
    },
    clear() {
      for (const [key, entry] of [...entries]) remove(key, entry);
    },
  };
}
