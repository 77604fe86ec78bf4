/**
 * Etiquette shared by all pods through Redis. One Lua script per operation keeps each reservation
 * atomic, and the clock is Redis's own (TIME), so pods with skewed clocks still agree on slots.
 * If Redis fails, a per-pod in-memory etiquette keeps the upstream protected meanwhile.
 */
import type { Redis } from 'ioredis';
import { waitFor } from './etiquette.ts';
import type { Etiquette, EtiquetteRules, Reservation } from './etiquette.ts';
import { MemoryEtiquette } from './etiquette-memory.ts';
import type { LiveSource } from './types.ts';

// KEYS: next-slot key, backoff key. ARGV: interval + margin (ms), max wait (ms).
// Returns {wait_ms} or {-1, backoff_ms}. Same arithmetic as `reserve` in etiquette-memory.ts.
const RESERVE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local nextSlot = tonumber(redis.call('GET', KEYS[1]) or '0')
local backoffUntil = tonumber(redis.call('GET', KEYS[2]) or '0')
local slot = math.max(now, nextSlot, backoffUntil)
local wait = slot - now
if wait > tonumber(ARGV[2]) then
  return {-1, math.max(0, backoffUntil - now)}
end
local interval = tonumber(ARGV[1])
redis.call('SET', KEYS[1], slot + interval, 'PX', wait + interval + 1000)
return {wait}
`;

// KEYS: backoff key. ARGV: seconds. Only ever extends a deadline.
const BACKOFF = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ms = math.floor(tonumber(ARGV[1]) * 1000)
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if now + ms > current then redis.call('SET', KEYS[1], now + ms, 'PX', ms) end
return 1
`;

// KEYS: backoff key. Returns the ms of backoff left, by Redis's clock.
const BACKOFF_LEFT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return math.max(0, tonumber(redis.call('GET', KEYS[1]) or '0') - now)
`;

export class RedisEtiquette implements Etiquette {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #rules: EtiquetteRules;
  readonly #fallback: MemoryEtiquette;
  readonly #onError: (error: unknown) => void;

  constructor(options: { redis: Redis; prefix: string; rules: EtiquetteRules; onError?: (error: unknown) => void }) {
    this.#redis = options.redis;
    this.#prefix = options.prefix;
    this.#rules = options.rules;
    this.#fallback = new MemoryEtiquette({ rules: options.rules });
    this.#onError = options.onError ?? (() => undefined);
  }

  async acquire(source: LiveSource): Promise<void> {
    const rule = this.#rules[source];
    let reservation: Reservation;
    try {
      const reply = (await this.#redis.eval(RESERVE, 2, this.#key(source, 'next'), this.#key(source, 'backoff'), rule.intervalMs + rule.marginMs, rule.maxWaitMs)) as number[];
      reservation = reply[0] === -1 ? { refused: true, backoffMs: reply[1] ?? 0 } : { waitMs: reply[0] ?? 0 };
    } catch (error) {
      this.#onError(error);
      return this.#fallback.acquire(source);
    }
    await waitFor(source, reservation, rule, () => this.#backoffLeft(source));
  }

  async #backoffLeft(source: LiveSource): Promise<number> {
    try {
      return Number(await this.#redis.eval(BACKOFF_LEFT, 1, this.#key(source, 'backoff')));
    } catch (error) {
      this.#onError(error);
      return 0;
    }
  }

  async backoff(source: LiveSource, seconds: number): Promise<void> {
    await this.#fallback.backoff(source, seconds);
    try {
      await this.#redis.eval(BACKOFF, 1, this.#key(source, 'backoff'), seconds);
    } catch (error) {
      this.#onError(error);
    }
  }

  #key(source: LiveSource, what: string): string {
    return `${this.#prefix}live:${source}:${what}`;
  }
}
