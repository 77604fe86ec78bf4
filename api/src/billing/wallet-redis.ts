/**
 * The wallet on Redis, shared by every API pod (rules in `wallet.ts`), so one account's traffic on
 * two pods spends one lease. Each step that reads and writes is one Lua script.
 *
 * Keys (per account): `<prefix>wal:<account>` (hash: lease, open 1|0, unspent, bal, balv),
 * `<prefix>wal-log:<account>` (hash: charge key → `<lease>|<amount>|<record json>`),
 * `<prefix>wal-lock:<account>` (the flush lock); and `<prefix>wal-dirty` (set of accounts with a
 * pending log).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { writeWithTurn } from '../limiter/redis.ts';
import type { Buckets, ChargeRecord, PendingCharge, SpendResult, UnspendResult, Wallet } from './wallet.ts';

/** A flush that takes longer than this loses its lock; far above any ledger write. */
const FLUSH_LOCK_MS = 30_000;

// KEYS: wallet, log, dirty. ARGV: charge key, amount, record json, account id.
// Returns {1|2 (spent|duplicate), lease, unspent, bal|''} or {0, closed lease|''}.
const SPEND = `
local bal = redis.call('HGET', KEYS[1], 'bal') or ''
local prev = redis.call('HGET', KEYS[2], ARGV[1])
if prev then
  local unspent = redis.call('HGET', KEYS[1], 'open') == '1' and redis.call('HGET', KEYS[1], 'unspent') or '0'
  return {2, string.match(prev, '^[^|]+'), unspent, bal}
end
local lease = redis.call('HGET', KEYS[1], 'lease')
if not lease then return {0, ''} end
if redis.call('HGET', KEYS[1], 'open') ~= '1' then return {0, lease} end
if tonumber(redis.call('HGET', KEYS[1], 'unspent')) < tonumber(ARGV[2]) then return {0, ''} end
local unspent = redis.call('HINCRBY', KEYS[1], 'unspent', -tonumber(ARGV[2]))
redis.call('HSET', KEYS[2], ARGV[1], lease .. '|' .. ARGV[2] .. '|' .. ARGV[3])
redis.call('SADD', KEYS[3], ARGV[4])
return {1, lease, tostring(unspent), bal}`;

// KEYS: wallet. ARGV: buckets micro, buckets version.
const STORE_BUCKETS = `
local v = tonumber(redis.call('HGET', KEYS[1], 'balv') or '-1')
if v < tonumber(ARGV[2]) then redis.call('HSET', KEYS[1], 'bal', ARGV[1], 'balv', ARGV[2]) end`;

// KEYS: wallet. ARGV: lease, amount to add, buckets micro, buckets version.
const FUND = `
if redis.call('HGET', KEYS[1], 'lease') == ARGV[1] then
  if redis.call('HGET', KEYS[1], 'open') == '1' then redis.call('HINCRBY', KEYS[1], 'unspent', ARGV[2]) end
else
  redis.call('HSET', KEYS[1], 'lease', ARGV[1], 'open', '1', 'unspent', ARGV[2])
end
${STORE_BUCKETS.replace(/ARGV\[2\]/g, 'ARGV[4]').replace(/ARGV\[1\]/g, 'ARGV[3]')}`;

// KEYS: wallet. ARGV: lease, amount.
const CREDIT = `
if redis.call('HGET', KEYS[1], 'lease') == ARGV[1] and redis.call('HGET', KEYS[1], 'open') == '1' then
  redis.call('HINCRBY', KEYS[1], 'unspent', ARGV[2])
end`;

// KEYS: wallet, log, lock. ARGV: charge key. Returns the amount put back, -1 (flushing), -2 (written).
const UNSPEND = `
if redis.call('EXISTS', KEYS[3]) == 1 then return -1 end
local rec = redis.call('HGET', KEYS[2], ARGV[1])
if not rec then return -2 end
redis.call('HDEL', KEYS[2], ARGV[1])
local lease, amount = string.match(rec, '^([^|]+)|([^|]+)|')
if redis.call('HGET', KEYS[1], 'lease') == lease and redis.call('HGET', KEYS[1], 'open') == '1' then
  redis.call('HINCRBY', KEYS[1], 'unspent', amount)
end
return tonumber(amount)`;

// KEYS: wallet. ARGV: lease.
const CLOSE = `
if redis.call('HGET', KEYS[1], 'lease') == ARGV[1] then redis.call('HSET', KEYS[1], 'open', '0') end`;

// KEYS: log, lock, dirty. ARGV: lock token, account id, charge keys written…
const TRIM = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
for i = 3, #ARGV do redis.call('HDEL', KEYS[1], ARGV[i]) end
if redis.call('HLEN', KEYS[1]) == 0 then redis.call('SREM', KEYS[3], ARGV[2]) end
redis.call('DEL', KEYS[2])
return 1`;

interface Script {
  readonly lua: string;
  readonly sha: string;
}

function script(lua: string): Script {
  return { lua, sha: createHash('sha1').update(lua).digest('hex') };
}

// Called by SHA: a spend sends its arguments, not the script's text.
const SCRIPTS = {
  spend: script(SPEND),
  storeBuckets: script(STORE_BUCKETS),
  fund: script(FUND),
  credit: script(CREDIT),
  unspend: script(UNSPEND),
  close: script(CLOSE),
  trim: script(TRIM),
};

export class RedisWallet implements Wallet {
  readonly local = false;
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(options: { redis: Redis; prefix: string }) {
    this.#redis = options.redis;
    this.#prefix = options.prefix;
  }

  #wallet(accountId: string): string {
    return `${this.#prefix}wal:${accountId}`;
  }

  #log(accountId: string): string {
    return `${this.#prefix}wal-log:${accountId}`;
  }

  #lock(accountId: string): string {
    return `${this.#prefix}wal-lock:${accountId}`;
  }

  get #dirty(): string {
    return `${this.#prefix}wal-dirty`;
  }

  /** EVALSHA, and EVAL once when Redis does not know the script yet (a restart, a flush). */
  async #run(s: Script, keys: readonly string[], ...args: (string | number)[]): Promise<unknown> {
    writeWithTurn(this.#redis);
    try {
      return await this.#redis.evalsha(s.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!String(error).includes('NOSCRIPT')) throw error;
      return this.#redis.eval(s.lua, keys.length, ...keys, ...args);
    }
  }

  async spend(accountId: string, record: ChargeRecord): Promise<SpendResult> {
    const { key, amountMicro, ...rest } = record;
    const reply = (await this.#run(SCRIPTS.spend, [this.#wallet(accountId), this.#log(accountId), this.#dirty], key, amountMicro, JSON.stringify(rest), accountId)) as [
      number,
      string,
      string?,
      string?,
    ];
    const [status, lease, unspent, bal] = reply;
    if (status === 0) return { ok: false, closedLeaseId: lease || undefined };
    return { ok: true, leaseId: lease, unspentMicro: Number(unspent), bucketsMicro: bal ? Number(bal) : undefined, duplicate: status === 2 };
  }

  async fund(accountId: string, leaseId: string, addMicro: number, buckets: Buckets): Promise<void> {
    await this.#run(SCRIPTS.fund, [this.#wallet(accountId)], leaseId, addMicro, buckets.micro, buckets.version);
  }

  async credit(accountId: string, leaseId: string, micro: number): Promise<void> {
    await this.#run(SCRIPTS.credit, [this.#wallet(accountId)], leaseId, micro);
  }

  async unspend(accountId: string, key: string): Promise<UnspendResult> {
    const reply = Number(await this.#run(SCRIPTS.unspend, [this.#wallet(accountId), this.#log(accountId), this.#lock(accountId)], key));
    if (reply === -1) return 'flushing';
    if (reply === -2) return 'written';
    return reply;
  }

  async close(accountId: string, leaseId: string): Promise<void> {
    await this.#run(SCRIPTS.close, [this.#wallet(accountId)], leaseId);
  }

  async unspent(accountId: string): Promise<number> {
    const [open, unspent] = await this.#redis.hmget(this.#wallet(accountId), 'open', 'unspent');
    return open === '1' ? Number(unspent) : 0;
  }

  async storeBuckets(accountId: string, buckets: Buckets): Promise<void> {
    await this.#run(SCRIPTS.storeBuckets, [this.#wallet(accountId)], buckets.micro, buckets.version);
  }

  async flush(accountId: string, write: (records: PendingCharge[]) => Promise<void>): Promise<boolean> {
    const token = randomUUID();
    if ((await this.#redis.set(this.#lock(accountId), token, 'PX', FLUSH_LOCK_MS, 'NX')) !== 'OK') return false;
    // On a failed write nothing is trimmed: the records stay pending for the next flush.
    let written: string[] = [];
    try {
      const records = Object.entries(await this.#redis.hgetall(this.#log(accountId))).map(([key, value]) => parseRecord(accountId, key, value));
      if (records.length) await write(records);
      written = records.map((r) => r.key);
    } finally {
      await this.#run(SCRIPTS.trim, [this.#log(accountId), this.#lock(accountId), this.#dirty], token, accountId, ...written);
    }
    return true;
  }

  async pendingAccounts(): Promise<string[]> {
    return this.#redis.smembers(this.#dirty);
  }

  async openLeases(): Promise<{ accountId: string; leaseId: string }[]> {
    // Leases in Redis outlive this pod: other pods, or the reconciler at expiry, settle them.
    return [];
  }
}

function parseRecord(accountId: string, key: string, value: string): PendingCharge {
  const [leaseId = '', amount = '0'] = value.split('|', 2);
  const rest = JSON.parse(value.slice(leaseId.length + amount.length + 2)) as Omit<ChargeRecord, 'key' | 'amountMicro'>;
  return { ...rest, key, amountMicro: Number(amount), accountId, leaseId };
}
