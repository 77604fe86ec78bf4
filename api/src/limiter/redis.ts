import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import type { CounterOptions, LimiterBackend } from './types.ts';

/**
 * Redis-backed counters shared by every pod. On a Redis error or while Redis is not ready, each
 * counter falls back to an in-process insurance limiter, so a limit is never lost (DECISIONS §4).
 */
export class RedisLimiterBackend implements LimiterBackend {
  readonly kind = 'redis';
  readonly client: Redis;
  readonly #prefix: string;
  readonly #owned: boolean;

  constructor(options: { url?: string; client?: Redis; prefix: string }) {
    this.#prefix = options.prefix;
    this.#owned = !options.client;
    this.client = options.client ?? createRedisClient(options.url ?? 'redis://127.0.0.1:6379');
  }

  counter({ name, points, durationS }: CounterOptions) {
    const keyPrefix = `${this.#prefix}rl:${name}`;
    return new RateLimiterRedis({
      storeClient: this.client,
      keyPrefix,
      points,
      duration: durationS,
      rejectIfRedisNotReady: true,
      insuranceLimiter: new RateLimiterMemory({ keyPrefix, points, duration: durationS }),
    });
  }

  /** Waits for the connection (bounded), so the first requests don't all land on the insurance limiter. */
  async ready(timeoutMs = 2_000): Promise<boolean> {
    if (this.client.status === 'ready') return true;
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(false), timeoutMs);
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.client.off('ready', onReady);
        resolve(ok);
      };
      const onReady = () => done(true);
      this.client.once('ready', onReady);
    });
  }

  async close(): Promise<void> {
    if (this.#owned) this.client.disconnect();
  }
}

/**
 * Fail fast instead of queueing: with the offline queue on, a request would wait for Redis to come
 * back instead of using the insurance limiter.
 */
export function createRedisClient(url: string): Redis {
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 1_000,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  // ioredis emits 'error' on every failed reconnect; the limiter's insurance covers requests.
  client.on('error', () => {});
  return client;
}
