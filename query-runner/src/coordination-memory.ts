/**
 * In-process locks and result index for the embedded default (no REDIS_URL): correct for one
 * runner process, which is the only topology it is chosen for.
 */
import { randomUUID } from 'node:crypto';
import type { ResultMeta } from '@uda/shared/runner-contract';
import type { Coordination, LockAttempt } from './coordination.ts';

export function createMemoryCoordination(now: () => number = Date.now): Coordination {
  const locks = new Map<string, { token: string; expiresAt: number }>();
  const results = new Map<string, ResultMeta>();

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
