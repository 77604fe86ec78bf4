/**
 * The delivery tracker on Redis, shared by every API pod (rules in `deliveries.ts`). Each step is
 * one Lua script, so two pods can never both decide to refund, and a refund can never be decided
 * while another delivery under the charge is in flight.
 *
 * Keys: `<prefix>dlv:<charge>` (sorted set: delivery id → expiry ms), `<prefix>dlv-state:<charge>`
 * (done | refunding | refunded), `<prefix>dlv-open` (sorted set: charge → latest expiry, for `reap`).
 */
import type { Redis } from 'ioredis';
import { DELIVERY_STATE_TTL_MS, type DeliveryTracker } from './deliveries.ts';
import { type Script, runScript, script } from './redis-scripts.ts';

// KEYS: deliveries, state, open. ARGV: delivery id, expiry, state ttl, charge key.
const BEGIN = script(`
local st = redis.call('GET', KEYS[2])
if st == 'refunding' or st == 'refunded' then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[3], 'GT', ARGV[2], ARGV[4])
return 1`);

const TOUCH = script(`
if redis.call('ZADD', KEYS[1], 'XX', 'CH', ARGV[2], ARGV[1]) == 1 then redis.call('ZADD', KEYS[3], 'GT', ARGV[2], ARGV[4]) end
return 0`);

const COMPLETE = script(`
redis.call('ZREM', KEYS[1], ARGV[1])
if redis.call('ZCARD', KEYS[1]) == 0 then redis.call('ZREM', KEYS[3], ARGV[4]) end
redis.call('SET', KEYS[2], 'done', 'PX', ARGV[3], 'NX')
return 0`);

const RELEASE = script(`
redis.call('ZREM', KEYS[1], ARGV[1])
if redis.call('ZCARD', KEYS[1]) == 0 then redis.call('ZREM', KEYS[3], ARGV[4]) end
return 0`);

// ARGV[2] is "now" here: entries that expired no longer count as in flight.
const ABANDON = script(`
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
if redis.call('ZCARD', KEYS[1]) > 0 then return 0 end
redis.call('ZREM', KEYS[3], ARGV[4])
return redis.call('SET', KEYS[2], 'refunding', 'PX', ARGV[3], 'NX') and 1 or 0`);

// KEYS: open. ARGV: now, key prefix, state ttl. Charges whose latest expiry passed.
const REAP = script(`
local out = {}
for _, charge in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 100)) do
  local d = ARGV[2] .. 'dlv:' .. charge
  redis.call('ZREMRANGEBYSCORE', d, '-inf', ARGV[1])
  local newest = redis.call('ZRANGE', d, -1, -1, 'WITHSCORES')
  if newest[2] then
    redis.call('ZADD', KEYS[1], newest[2], charge)
  else
    redis.call('ZREM', KEYS[1], charge)
    if redis.call('SET', ARGV[2] .. 'dlv-state:' .. charge, 'refunding', 'PX', ARGV[3], 'NX') then table.insert(out, charge) end
  end
end
return out`);

export class RedisDeliveryTracker implements DeliveryTracker {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(options: { redis: Redis; prefix: string }) {
    this.#redis = options.redis;
    this.#prefix = options.prefix;
  }

  #run(step: Script, chargeKey: string, deliveryId: string, arg: number): Promise<unknown> {
    const keys = [`${this.#prefix}dlv:${chargeKey}`, `${this.#prefix}dlv-state:${chargeKey}`, `${this.#prefix}dlv-open`];
    return runScript(this.#redis, step, keys, deliveryId, arg, DELIVERY_STATE_TTL_MS, chargeKey);
  }

  async begin(chargeKey: string, deliveryId: string, expiresAtMs: number): Promise<boolean> {
    return (await this.#run(BEGIN, chargeKey, deliveryId, expiresAtMs)) === 1;
  }

  async touch(chargeKey: string, deliveryId: string, expiresAtMs: number): Promise<void> {
    await this.#run(TOUCH, chargeKey, deliveryId, expiresAtMs);
  }

  async complete(chargeKey: string, deliveryId: string): Promise<void> {
    await this.#run(COMPLETE, chargeKey, deliveryId, 0);
  }

  async release(chargeKey: string, deliveryId: string): Promise<void> {
    await this.#run(RELEASE, chargeKey, deliveryId, 0);
  }

  async abandon(chargeKey: string, deliveryId: string, nowMs: number): Promise<boolean> {
    return (await this.#run(ABANDON, chargeKey, deliveryId, nowMs)) === 1;
  }

  async reap(nowMs: number): Promise<string[]> {
    return (await runScript(this.#redis, REAP, [`${this.#prefix}dlv-open`], nowMs, this.#prefix, DELIVERY_STATE_TTL_MS)) as string[];
  }

  async refunded(chargeKey: string): Promise<void> {
    await this.#redis.set(`${this.#prefix}dlv-state:${chargeKey}`, 'refunded', 'PX', DELIVERY_STATE_TTL_MS);
  }

  async close(): Promise<void> {}
}
