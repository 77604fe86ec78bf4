/**
 * Answers that repeat are not recomputed: a lookup's response body is kept per (data version,
 * source, limit, the keywords' terms in order), so the same query typed with other case, accents
 * or punctuation is one entry. Bounded in bytes: the least recently used entries go first. An entry
 * never goes stale, as a version's index never changes; a new version's lookups have keys of their own
 * and the old version's entries age out.
 */
import type { LookupRequest } from '@uda/shared/runner-contract';
import type { ParsedQuery } from '@uda/search/query';

export interface PageCache {
  get(key: string): Buffer | undefined;
  set(key: string, body: Buffer): void;
  /** Bytes held (bodies and keys). */
  readonly bytes: number;
}

export function pageCacheKey(version: string, request: LookupRequest, query: ParsedQuery): string {
  return `${version}\n${request.source}\n${request.limit}\n${query.phrase.join(' ')}`;
}

/** A cache of at most `maxBytes`; with 0, one that keeps nothing. */
export function createPageCache(maxBytes: number): PageCache {
  const entries = new Map<string, Buffer>();
  let bytes = 0;
  const sizeOf = (key: string, body: Buffer) => key.length * 2 + body.length;
  return {
    get(key) {
      const body = entries.get(key);
      if (body) {
        // Most recently used last: the Map's order is the eviction order.
        entries.delete(key);
        entries.set(key, body);
      }
      return body;
    },
    set(key, body) {
      const size = sizeOf(key, body);
      if (size > maxBytes || entries.has(key)) return;
      entries.set(key, body);
      bytes += size;
      for (const [oldest, held] of entries) {
        if (bytes <= maxBytes) break;
        entries.delete(oldest);
        bytes -= sizeOf(oldest, held);
      }
    },
    get bytes() {
      return bytes;
    },
  };
}
