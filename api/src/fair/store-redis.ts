/**
 * Fair shares on Redis, shared by every API pod. Running queries of a caller are a sorted set of
 * tokens scored by their expiry: taking one drops the expired, counts, and adds in one script, so
 * two pods cannot both pass the limit, and a token of a dead pod lapses by itself. On a Redis
 * error the in-process store answers meanwhile (per pod), as the other limiters' insurance does.
 *
 * Keys: `<prefix>fair:run:<caller>` (sorted set), `<prefix>fair:spent:<caller>:<window>` (integer ms).
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { runScript, script } from '../redis/scripts.ts';
import { writeWithTurn } from '../limiter/redis.ts';
import { type BudgetCap, type FairStart, type FairStore, MemoryFairStore } from './store.ts';

// KEYS: the caller's set, then the budgets' spent keys. ARGV: now ms, limit, ttl ms, token, then each
// budget's cap ms. Returns -i when budget i (from 1) is spent, 1 when held, 0 when `limit` run already.
const START = script(`
for i = 2, #KEYS do
  if tonumber(redis.call('GET', KEYS[i]) or '0') >= tonumber(ARGV[3 + i]) then return 1 - i end
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[3]), ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`);

export class RedisFairStore implements FairStore {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #insurance = new MemoryFairStore();
  readonly #onError: (error: unknown) => void;

  constructor(options: { redis: Redis; prefix: string; onError: (error: unknown) => void }) {
    this.#redis = options.redis;
    this.#prefix = `${options.prefix}fair:`;
    this.#onError = options.onError;
  }

  async start(key: string, limit: number, ttlMs: number, budgets: readonly BudgetCap[]): Promise<FairStart> {
    const token = randomUUID();
    const keys = [this.#runKey(key), ...budgets.map((b) => this.#spentKey(b.key, b.window))];
    try {
      const outcome = Number(await runScript(this.#redis, START, keys, Date.now(), limit, ttlMs, token, ...budgets.map((b) => b.capMs)));
      return outcome < 0 ? { spentBudget: -outcome - 1 } : outcome === 1 ? { token } : {};
    } catch (error) {
      this.#onError(error);
      return this.#insurance.start(key, limit, ttlMs, budgets);
    }
  }

  /** Leaves with the other commands of its event-loop turn (the delivery's begin that follows the run). */
  async release(key: string, token: string): Promise<void> {
    writeWithTurn(this.#redis);
    await this.#redis.zrem(this.#runKey(key), token).catch(this.#onError);
    await this.#insurance.release(key, token);
  }

  async spent(key: string, window: number): Promise<number> {
    try {
      return Number((await this.#redis.get(this.#spentKey(key, window))) ?? 0);
    } catch (error) {
      this.#onError(error);
      return this.#insurance.spent(key, window);
    }
  }

  async spend(key: string, window: number, ms: number, ttlS: number): Promise<void> {
    const id = this.#spentKey(key, window);
    try {
      await this.#redis.multi().incrby(id, ms).expire(id, ttlS).exec();
    } catch (error) {
      this.#onError(error);
      await this.#insurance.spend(key, window, ms, ttlS);
    }
  }

  #runKey(key: string): string {
    return `${this.#prefix}run:${key}`;
  }

  #spentKey(key: string, window: number): string {
    return `${this.#prefix}spent:${key}:${window}`;
  }
}
