/**
 * The delivery tracker on Redis, shared by every API pod (rules in `deliveries.ts`). Each step is
 * one Lua script, so two pods can never both decide to refund, and a refund can never be decided
 * while another delivery under the charge is in flight.
 *
 * Keys: `<prefix>dlv:<charge>` (sorted set: delivery id → expiry ms), `<prefix>dlv-state:<charge>`
 * (done | refunding | refunded), `<prefix>dlv-open` (sorted set: charge → latest expiry, for `reap`);
 * for the bytes rule (`bytes-delivered.ts`): `<prefix>dlv-bytes:<window base>` (sorted set of the
 * file's delivered spans `start:end`, scored by start, kept merged), `<prefix>dlv-part:<charge>`
 * (bytes went out under the charge) and `<prefix>dlv-refunds:<account>:<UTC day>` (partial refunds).
 */
import type { Redis } from 'ioredis';
import { utcDay } from '../quota.ts';
import { type BytesDelivered, DELIVERED_BYTES_TTL_MS, PARTIAL_REFUNDS_PER_DAY, PARTIAL_REFUNDS_TTL_MS, bytesToStand, carriesBytes } from './bytes-delivered.ts';
import { accountOfChargeKey, windowBaseOf } from './charge-keys.ts';
import { DELIVERY_STATE_TTL_MS, type DeliveryTracker } from './deliveries.ts';
import { sendWithNextWrite } from '../limiter/redis.ts';
import { type Script, runScript, script } from '../redis/scripts.ts';
import { BEGIN_DELIVERY, type BeginPart } from './reread-rider.ts';

// Claims a charge's refund (its state is unset and no delivery is in flight). A partial refund takes
// one of the account's day; when none is left the charge stands (`done`) and 0 is returned.
// Args: state key, partial key, day's refunds key, state ttl, cap, refunds ttl.
const CLAIM = `
local function claim(state, partial, refunds, stateTtl, cap, refundsTtl)
  if redis.call('EXISTS', partial) == 1 then
    if tonumber(redis.call('GET', refunds) or '0') >= tonumber(cap) then
      redis.call('SET', state, 'done', 'PX', stateTtl)
      return 0
    end
    redis.call('INCR', refunds)
    redis.call('PEXPIRE', refunds, refundsTtl)
  end
  redis.call('SET', state, 'refunding', 'PX', stateTtl)
  return 1
end`;

// Adds a span to a file's delivered spans, keeps them merged, and returns the distinct bytes covered.
const COVER = `
local function cover(key, s, e, ttl)
  if e > s then redis.call('ZADD', key, s, s .. ':' .. e) end
  local members = redis.call('ZRANGE', key, 0, -1)
  local runs, total = {}, 0
  for _, m in ipairs(members) do
    local a, b = string.match(m, '^(%d+):(%d+)$')
    a, b = tonumber(a), tonumber(b)
    local last = runs[#runs]
    if last and a <= last[2] then
      if b > last[2] then last[2] = b end
    else
      table.insert(runs, {a, b})
    end
  end
  if #runs < #members then
    redis.call('DEL', key)
    for _, r in ipairs(runs) do redis.call('ZADD', key, r[1], r[1] .. ':' .. r[2]) end
  end
  if #runs > 0 then redis.call('PEXPIRE', key, ttl) end
  for _, r in ipairs(runs) do total = total + (r[2] - r[1]) end
  return total
end`;

// KEYS: deliveries, state, open. ARGV: delivery id, expiry, state ttl, charge key.
const BEGIN = script(`${BEGIN_DELIVERY}
return beginDelivery(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4])`);

const TOUCH = script(`
if redis.call('ZADD', KEYS[1], 'XX', 'CH', ARGV[2], ARGV[1]) == 1 then redis.call('ZADD', KEYS[3], 'GT', ARGV[2], ARGV[4]) end
return 0`);

// KEYS: deliveries, state, open, file's delivered bytes. The charge stands: its window is paid, so the
// bytes its file's broken deliveries took are forgotten.
const COMPLETE = script(`
redis.call('ZREM', KEYS[1], ARGV[1])
if redis.call('ZCARD', KEYS[1]) == 0 then redis.call('ZREM', KEYS[3], ARGV[4]) end
if redis.call('SET', KEYS[2], 'done', 'PX', ARGV[3], 'NX') then redis.call('DEL', KEYS[4]) end
return 0`);

const RELEASE = script(`
redis.call('ZREM', KEYS[1], ARGV[1])
if redis.call('ZCARD', KEYS[1]) == 0 then redis.call('ZREM', KEYS[3], ARGV[4]) end
return 0`);

// KEYS: deliveries, state, open, file's delivered bytes, partial, day's partial refunds.
// ARGV: delivery id, now (entries that expired no longer count as in flight), state ttl, charge key,
// span start, span end, bytes that make the charge stand (0: not a file), bytes ttl, cap, refunds ttl.
const ABANDON = script(`${CLAIM}${COVER}
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
local idle = redis.call('ZCARD', KEYS[1]) == 0
if idle then redis.call('ZREM', KEYS[3], ARGV[4]) end
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local s, e, need = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
if need > 0 and e > s then
  redis.call('SET', KEYS[5], '1', 'PX', ARGV[3])
  if cover(KEYS[4], s, e, ARGV[8]) >= need then
    redis.call('SET', KEYS[2], 'done', 'PX', ARGV[3])
    redis.call('DEL', KEYS[4])
    return 0
  end
end
if not idle then return 0 end
return claim(KEYS[2], KEYS[5], KEYS[6], ARGV[3], ARGV[9], ARGV[10])`);

// KEYS: open. ARGV: now, key prefix, state ttl, UTC day, cap, refunds ttl. Charges whose latest expiry
// passed; a delivery that died with its pod reported no bytes, so only earlier breaks make a refund partial.
const REAP = script(`${CLAIM}
local out = {}
for _, charge in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 100)) do
  local d = ARGV[2] .. 'dlv:' .. charge
  redis.call('ZREMRANGEBYSCORE', d, '-inf', ARGV[1])
  local newest = redis.call('ZRANGE', d, -1, -1, 'WITHSCORES')
  if newest[2] then
    redis.call('ZADD', KEYS[1], newest[2], charge)
  else
    redis.call('ZREM', KEYS[1], charge)
    local state = ARGV[2] .. 'dlv-state:' .. charge
    local account = string.match(charge, '^[^:]*:([^:]*):') or ''
    local refunds = ARGV[2] .. 'dlv-refunds:' .. account .. ':' .. ARGV[4]
    if redis.call('EXISTS', state) == 0 and claim(state, ARGV[2] .. 'dlv-part:' .. charge, refunds, ARGV[3], ARGV[5], ARGV[6]) == 1 then
      table.insert(out, charge)
    end
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
    return runScript(this.#redis, step, this.#keys(chargeKey), deliveryId, arg, DELIVERY_STATE_TTL_MS, chargeKey);
  }

  #keys(chargeKey: string): string[] {
    return [`${this.#prefix}dlv:${chargeKey}`, `${this.#prefix}dlv-state:${chargeKey}`, `${this.#prefix}dlv-open`, `${this.#prefix}dlv-bytes:${windowBaseOf(chargeKey)}`];
  }

  async begin(chargeKey: string, deliveryId: string, expiresAtMs: number): Promise<boolean> {
    return (await this.#run(BEGIN, chargeKey, deliveryId, expiresAtMs)) === 1;
  }

  beginRider(deliveryId: string, expiresAtMs: number): BeginPart {
    return { keys: [`${this.#prefix}dlv-open`], args: [`${this.#prefix}dlv:`, `${this.#prefix}dlv-state:`, deliveryId, expiresAtMs, DELIVERY_STATE_TTL_MS] };
  }

  async touch(chargeKey: string, deliveryId: string, expiresAtMs: number): Promise<void> {
    await this.#run(TOUCH, chargeKey, deliveryId, expiresAtMs);
  }

  async complete(chargeKey: string, deliveryId: string, withNextWrite = false): Promise<void> {
    if (!withNextWrite) return void (await this.#run(COMPLETE, chargeKey, deliveryId, 0));
    await new Promise((resolve, reject) => {
      sendWithNextWrite(this.#redis, () => void this.#run(COMPLETE, chargeKey, deliveryId, 0).then(resolve, reject));
    });
  }

  async release(chargeKey: string, deliveryId: string): Promise<void> {
    await this.#run(RELEASE, chargeKey, deliveryId, 0);
  }

  async abandon(chargeKey: string, deliveryId: string, nowMs: number, delivered?: BytesDelivered): Promise<boolean> {
    const keys = [
      ...this.#keys(chargeKey),
      `${this.#prefix}dlv-part:${chargeKey}`,
      `${this.#prefix}dlv-refunds:${accountOfChargeKey(chargeKey)}:${utcDay(new Date(nowMs))}`,
    ];
    const span = delivered && carriesBytes(delivered.span) ? delivered.span : { start: 0, end: 0 };
    const need = delivered ? bytesToStand(delivered.sizeBytes) : 0;
    const args = [span.start, span.end, need, DELIVERED_BYTES_TTL_MS, PARTIAL_REFUNDS_PER_DAY, PARTIAL_REFUNDS_TTL_MS];
    return (await runScript(this.#redis, ABANDON, keys, deliveryId, nowMs, DELIVERY_STATE_TTL_MS, chargeKey, ...args)) === 1;
  }

  async reap(nowMs: number): Promise<string[]> {
    const args = [nowMs, this.#prefix, DELIVERY_STATE_TTL_MS, utcDay(new Date(nowMs)), PARTIAL_REFUNDS_PER_DAY, PARTIAL_REFUNDS_TTL_MS];
    return (await runScript(this.#redis, REAP, [`${this.#prefix}dlv-open`], ...args)) as string[];
  }

  async refunded(chargeKey: string): Promise<void> {
    await this.#redis.set(`${this.#prefix}dlv-state:${chargeKey}`, 'refunded', 'PX', DELIVERY_STATE_TTL_MS);
  }

  async close(): Promise<void> {}
}
