/**
 * Locks and the result index in Redis, shared by every runner (DECISIONS §6). A lock is
 * `SET NX PX` with a random token; release deletes it only while the token still matches, so a
 * runner whose lock expired never frees the lock another runner now holds.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { resultMetaSchema } from '@uda/shared/runner-contract';
import type { Coordination, LockAttempt } from './coordination.ts';
import { unavailableError } from './errors.ts';

/** A Redis outage is the service's fault, not the query's: QUERY_BACKEND_UNAVAILABLE, never a 500. */
async function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch {
    throw unavailableError('The query service cannot reach its coordination store; retry shortly.');
  }
}

const RELEASE_IF_OWNER = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;
// Replace only if present and keep the remaining TTL: a lazy CSV must not extend the window.
const UPDATE_KEEP_TTL = `if redis.call('exists', KEYS[1]) == 1 then return redis.call('set', KEYS[1], ARGV[1], 'KEEPTTL') else return 0 end`;

export function createRedisCoordination(url: string, prefix: string, onError: (error: Error) => void = () => {}): Coordination {
  const redis = new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false });
  // Connection errors also fail the commands that need Redis; the listener only keeps them out of stderr.
  redis.on('error', onError);
  const lockKey = (id: string) => `${prefix}lock:${id}`;
  const resultKey = (id: string) => `${prefix}result:${id}`;

  return {
    description: 'redis',
    locks: {
      acquire: (queryId, ttlMs) => guarded(async (): Promise<LockAttempt> => {
        const token = randomUUID();
        const ok = await redis.set(lockKey(queryId), token, 'PX', ttlMs, 'NX');
        if (ok !== 'OK') {
          const pttl = await redis.pttl(lockKey(queryId));
          return { acquired: false, retryAfterMs: pttl > 0 ? pttl : 1000 };
        }
        let released = false;
        return {
          acquired: true,
          lock: {
            async release() {
              if (released) return;
              released = true;
              await redis.eval(RELEASE_IF_OWNER, 1, lockKey(queryId), token);
            },
          },
        };
      }),
    },
    index: {
      get: (queryId) => guarded(async () => {
        const raw = await redis.get(resultKey(queryId));
        if (!raw) return undefined;
        const parsed = resultMetaSchema.safeParse(JSON.parse(raw));
        return parsed.success ? parsed.data : undefined;
      }),
      put: (meta) => guarded(async () => {
        const ttlMs = meta.expiresAt - Date.now();
        if (ttlMs > 0) await redis.set(resultKey(meta.queryId), JSON.stringify(meta), 'PX', ttlMs);
      }),
      update: (meta) => guarded(async () => {
        await redis.eval(UPDATE_KEEP_TTL, 1, resultKey(meta.queryId), JSON.stringify(meta));
      }),
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
