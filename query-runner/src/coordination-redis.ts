/**
 * Locks and the result index in Redis, shared by every runner (DECISIONS §6). A lock is
 * `SET NX PX` with a random token; release deletes it only while the token still matches, so a
 * runner whose lock expired never frees the lock another runner now holds.
 *
 * A lock is a short lease the holder renews while it runs (up to the lock's full lifetime), so a
 * runner that dies frees its queries within one lease, and a refused caller's retry hint is the
 * lease's remaining time rather than the lifetime of a lock nobody holds any more.
 *
 * Redis being down must not stall SQL: commands fail at once instead of queueing while
 * disconnected, and every operation then falls back to this runner's in-process locks and index
 * (the per-pod lock). The API sends a query to the same runner each time (rendezvous hashing), so
 * re-reads of results made during the outage are still found and free.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { resultMetaSchema } from '@uda/shared/runner-contract';
import type { Coordination, HeldLock, LockAttempt } from './coordination.ts';
import { createMemoryCoordination } from './coordination-memory.ts';

const RELEASE_IF_OWNER = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;
const RENEW_IF_OWNER = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;
// Replace only if present and keep the remaining TTL: a lazy CSV must not extend the window.
const UPDATE_KEEP_TTL = `if redis.call('exists', KEYS[1]) == 1 then return redis.call('set', KEYS[1], ARGV[1], 'KEEPTTL') else return 0 end`;

export interface RedisCoordinationOptions {
  /** Lease of a held lock, renewed every third of it. */
  readonly leaseMs?: number;
  /** A command that takes longer than this counts as Redis being down. */
  readonly commandTimeoutMs?: number;
}

export const DEFAULT_LEASE_MS = 5_000;

/** `onError` sees Redis connection errors and each switch to (and back from) the in-process fallback. */
export function createRedisCoordination(
  url: string,
  prefix: string,
  onError: (error: Error) => void = () => {},
  options: RedisCoordinationOptions = {},
): Coordination {
  const { leaseMs = DEFAULT_LEASE_MS, commandTimeoutMs = 1_000 } = options;
  const { redis, started } = connect(url, commandTimeoutMs, onError);
  const local = createMemoryCoordination();
  const orLocal = withFallback(started, onError);
  const locks = redisLocks(redis, prefix, leaseMs);
  return {
    description: 'redis',
    locks: {
      acquire: (queryId, ttlMs) => orLocal(() => locks.acquire(queryId, ttlMs), () => local.locks.acquire(queryId, ttlMs)),
    },
    index: redisIndex(redis, prefix, local, orLocal),
    async close() {
      await local.close();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

function connect(url: string, commandTimeoutMs: number, onError: (error: Error) => void) {
  const redis = new Redis(url, {
    // Fail at once while disconnected: the fallback answers instead of a caller waiting on reconnects.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: commandTimeoutMs,
    connectTimeout: 2_000,
  });
  // Connection errors also fail the commands that need Redis; the listener only keeps them out of stderr.
  redis.on('error', onError);
  // Until the first connection is up (or for one command timeout after start, whichever is first),
  // commands wait for it, so a starting runner uses Redis rather than its fallback.
  const started = Promise.race([new Promise<void>((resolve) => redis.once('ready', () => resolve())), sleep(commandTimeoutMs)]);
  return { redis, started };
}

type OrLocal = <T>(work: () => Promise<T>, fallback: () => Promise<T>) => Promise<T>;

/** Runs `work` on Redis; when Redis fails, runs `fallback` (this runner's own coordination). */
function withFallback(started: Promise<void>, onError: (error: Error) => void): OrLocal {
  let degraded = false;
  return async function orLocal<T>(work: () => Promise<T>, fallback: () => Promise<T>): Promise<T> {
    await started;
    try {
      const result = await work();
      if (degraded) onError(new Error('redis is back; locks and the result index are shared again'));
      degraded = false;
      return result;
    } catch (error) {
      if (!degraded) onError(new Error(`redis unavailable, using this runner's own locks and index: ${(error as Error).message}`));
      degraded = true;
      return fallback();
    }
  };
}

function redisLocks(redis: Redis, prefix: string, leaseMs: number) {
  const lockKey = (id: string) => `${prefix}lock:${id}`;

  /** Renews the lease until released or until the lock's full lifetime is spent. */
  function renewedLock(queryId: string, token: string, lease: number, ttlMs: number): HeldLock {
    const endsAt = Date.now() + ttlMs;
    const renew = () => {
      const left = endsAt - Date.now();
      if (left <= 0) return;
      redis.eval(RENEW_IF_OWNER, 1, lockKey(queryId), token, String(Math.min(lease, left))).catch(() => {});
    };
    const timer = setInterval(renew, Math.max(50, Math.floor(lease / 3)));
    timer.unref();
    let released = false;
    return {
      async release() {
        if (released) return;
        released = true;
        clearInterval(timer);
        await redis.eval(RELEASE_IF_OWNER, 1, lockKey(queryId), token);
      },
    };
  }

  async function acquire(queryId: string, ttlMs: number): Promise<LockAttempt> {
    const token = randomUUID();
    const lease = Math.min(leaseMs, ttlMs);
    const ok = await redis.set(lockKey(queryId), token, 'PX', lease, 'NX');
    if (ok !== 'OK') {
      const pttl = await redis.pttl(lockKey(queryId));
      return { acquired: false, retryAfterMs: pttl > 0 ? pttl : 1000 };
    }
    return { acquired: true, lock: renewedLock(queryId, token, lease, ttlMs) };
  }

  return { acquire };
}

function redisIndex(redis: Redis, prefix: string, local: Coordination, orLocal: OrLocal): Coordination['index'] {
  const resultKey = (id: string) => `${prefix}result:${id}`;
  return {
    get: (queryId) =>
      orLocal(
        async () => {
          const raw = await redis.get(resultKey(queryId));
          if (!raw) return local.index.get(queryId);
          const parsed = resultMetaSchema.safeParse(JSON.parse(raw));
          return parsed.success ? parsed.data : undefined;
        },
        () => local.index.get(queryId),
      ),
    put: async (meta) => {
      // Kept locally too, so a re-read during a later outage still finds it.
      await local.index.put(meta);
      await orLocal(
        async () => {
          const ttlMs = meta.expiresAt - Date.now();
          if (ttlMs > 0) await redis.set(resultKey(meta.queryId), JSON.stringify(meta), 'PX', ttlMs);
        },
        async () => {},
      );
    },
    update: async (meta) => {
      await local.index.update(meta);
      await orLocal(
        async () => {
          await redis.eval(UPDATE_KEEP_TTL, 1, resultKey(meta.queryId), JSON.stringify(meta));
        },
        async () => {},
      );
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
