/**
 * In-process locks and result index for the embedded default (no REDIS_URL): correct for one
 * runner process, which is the only topology it is chosen for.
 */
import { randomUUID } from 'node:crypto';
import type { ResultMeta } from '@uda/shared/runner-contract';
import type { Coordination, LockAttempt } from './coordination.ts';

/** Entries kept at most; past it the oldest go first (a Redis runner keeps a copy of every result here). */
export const MAX_RESULTS = 10_000;

export function createMemoryCoordination(now: () => number = Date.now): Coordination {
  const locks = new Map<string, { token: string; expiresAt: number }>();
  const results = new Map<string, ResultMeta>();

  /** Drops closed windows, then the oldest entries beyond the cap, so the maps never grow unbounded. */
  const sweep = () => {
    const at = now();
    for (const [id, meta] of results) if (meta.expiresAt <= at) results.delete(id);
    for (const [id, lock] of locks) if (lock.expiresAt <= at) locks.delete(id);
    for (const id of results.keys()) {
      // Down to 90%, so a full map is swept once per thousand stores, not on every one.
      if (results.size <= MAX_RESULTS * 0.9) break;
      results.delete(id);
    }
  };

  const liveLock = (queryId: string) => {
    const held = locks.get(queryId);
    return held && held.expiresAt > now() ? held : undefined;
  };

  return {
    description: 'in-process',
    locks: {
      async acquire(queryId, ttlMs): Promise<LockAttempt> {
        const held = liveLock(queryId);
        if (held) return { acquired: false, retryAfterMs: held.expiresAt - now() };
        const token = randomUUID();
        locks.set(queryId, { token, expiresAt: now() + ttlMs });
        return {
          acquired: true,
          lock: {
            async release() {
              if (locks.get(queryId)?.token === token) locks.delete(queryId);
            },
          },
        };
      },
    },
    index: {
      async get(queryId) {
        const meta = results.get(queryId);
        if (meta && meta.expiresAt > now()) return meta;
        results.delete(queryId);
        return undefined;
      },
      async put(meta) {
        if (results.size >= MAX_RESULTS) sweep();
        results.set(meta.queryId, meta);
      },
      async update(meta) {
        if (results.has(meta.queryId)) results.set(meta.queryId, meta);
      },
    },
    async close() {
      locks.clear();
      results.clear();
    },
  };
}
