/**
 * The wallet on Redis, shared by every API pod (rules in `wallet.ts`), so one account's traffic on
 * two pods spends one lease. Each step that reads and writes is one Lua script.
 *
 * Keys (per account): `<prefix>wal:<account>` (hash: lease, open 1|0, unspent, held, bal, balv),
 * `<prefix>wal-log:<account>` (hash: charge key → `<lease>|<amount>|<record json>`),
 * `<prefix>wal-lock:<account>` (the flush lock), `<prefix>wal-hold:<account>` (hash: charge key →
 * `<lease>|<amount>`, lease `-` once orphaned); and `<prefix>wal-dirty` (set of accounts with a
 * pending log), `<prefix>wal-holds` (sorted set: `<account> <charge key>` → hold expiry ms),
 * `<prefix>wal-key:<charge key>` (a window charge's key, remembered past its flush: its lease),
 * `<prefix>wal-paid:<account>:<name>` (a re-read marker: the charge key of a paid result, for its window).
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { TakeRider } from '../limiter/types.ts';
import { type Script, runScript, script } from './redis-scripts.ts';
import type { Buckets, ChargeRecord, HoldRequest, HoldResult, PaidMarker, PendingCharge, Release, SpendResult, UnspendResult, Wallet } from './wallet.ts';

/** A flush that takes longer than this loses its lock; far above any ledger write. */
const FLUSH_LOCK_MS = 30_000;

// KEYS: wallet, log, dirty, the key's memory, the re-read marker. ARGV: charge key, amount, record
// json, account id, how long to remember the key (0: while it is in the log only), the marker's
// life (0: no marker).
// Returns {1|2 (spent|duplicate), lease, unspent, bal|'', held} or {0, closed lease|''}.
const SPEND = `
local bal = redis.call('HGET', KEYS[1], 'bal') or ''
local held = redis.call('HGET', KEYS[1], 'open') == '1' and (redis.call('HGET', KEYS[1], 'held') or '0') or '0'
local prev = redis.call('HGET', KEYS[2], ARGV[1])
local remembered = tonumber(ARGV[5]) > 0 and redis.call('GET', KEYS[4])
if prev or remembered then
  local unspent = redis.call('HGET', KEYS[1], 'open') == '1' and redis.call('HGET', KEYS[1], 'unspent') or '0'
  return {2, prev and string.match(prev, '^[^|]+') or remembered, unspent, bal, held}
end
local lease = redis.call('HGET', KEYS[1], 'lease')
if not lease then return {0, ''} end
if redis.call('HGET', KEYS[1], 'open') ~= '1' then return {0, lease} end
if tonumber(redis.call('HGET', KEYS[1], 'unspent')) < tonumber(ARGV[2]) then return {0, ''} end
local unspent = redis.call('HINCRBY', KEYS[1], 'unspent', -tonumber(ARGV[2]))
redis.call('HSET', KEYS[2], ARGV[1], lease .. '|' .. ARGV[2] .. '|' .. ARGV[3])
redis.call('SADD', KEYS[3], ARGV[4])
if tonumber(ARGV[5]) > 0 then redis.call('SET', KEYS[4], lease, 'PX', ARGV[5]) end
if tonumber(ARGV[6]) > 0 then redis.call('SET', KEYS[5], ARGV[1], 'PX', ARGV[6]) end
return {1, lease, tostring(unspent), bal, held}`;

// KEYS: wallet. ARGV: buckets micro, buckets version.
const STORE_BUCKETS = `
local v = tonumber(redis.call('HGET', KEYS[1], 'balv') or '-1')
if v < tonumber(ARGV[2]) then redis.call('HSET', KEYS[1], 'bal', ARGV[1], 'balv', ARGV[2]) end`;

// KEYS: wallet. ARGV: lease, amount to add, buckets micro, buckets version.
const FUND = `
if redis.call('HGET', KEYS[1], 'lease') == ARGV[1] then
  if redis.call('HGET', KEYS[1], 'open') == '1' then redis.call('HINCRBY', KEYS[1], 'unspent', ARGV[2]) end
else
  redis.call('HSET', KEYS[1], 'lease', ARGV[1], 'open', '1', 'unspent', ARGV[2], 'held', 0)
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

// Ends one hold (rules in wallet.ts). Returns 0: no such hold (already released or reaped),
// 1: done, 2: forgiven (its lease was settled and the open one could not cover the charge).
const RELEASE_FN = `
local function release(prefix, acc, key, t, json)
  local w, hh = prefix .. 'wal:' .. acc, prefix .. 'wal-hold:' .. acc
  local h = redis.call('HGET', hh, key)
  if not h then return 0 end
  redis.call('HDEL', hh, key)
  redis.call('ZREM', prefix .. 'wal-holds', acc .. ' ' .. key)
  local lease, amount = string.match(h, '^([^|]+)|(%d+)$')
  amount = tonumber(amount)
  local cur = redis.call('HMGET', w, 'lease', 'open', 'unspent')
  local same, open = cur[1] == lease, cur[2] == '1'
  if same then redis.call('HINCRBY', w, 'held', -amount) end
  if t == 0 then
    if same and open then redis.call('HINCRBY', w, 'unspent', amount) end
    return 1
  end
  local log = prefix .. 'wal-log:' .. acc
  if same then
    redis.call('HSET', log, key, lease .. '|' .. t .. '|' .. json)
    if open then redis.call('HINCRBY', w, 'unspent', amount - t) end
  elseif open and tonumber(cur[3]) >= t then
    redis.call('HINCRBY', w, 'unspent', -t)
    redis.call('HSET', log, key, cur[1] .. '|' .. t .. '|' .. json)
  else
    return 2
  end
  redis.call('SADD', prefix .. 'wal-dirty', acc)
  return 1
end`;

// Releases from ARGV[i..] (4 per release: account, key, charge, record json); the forgiven keys.
const RELEASE_ALL_FN = `
local function releaseAll(prefix, args, from)
  local forgiven = {}
  for i = from, #args, 4 do
    if release(prefix, args[i], args[i + 1], tonumber(args[i + 2]), args[i + 3]) == 2 then forgiven[#forgiven + 1] = args[i + 1] end
  end
  return forgiven
end`;

// The rider of a request's counter call (`TakeRider`): first the releases it carries, then, unless a
// counter refused the request, the hold. RK: wallet, holds, hold expiries. RA: prefix, account, key,
// amount, expiry, releases… Returns {1, lease, forgiven, unspent, held, bal|''} or {0, lease if open but short|'', forgiven}.
const HOLD_RIDER = `${RELEASE_FN}${RELEASE_ALL_FN}
local forgiven = releaseAll(RA[1], RA, 6)
if over then return {0, '', forgiven} end
local st = redis.call('HMGET', RK[1], 'lease', 'open', 'unspent', 'bal')
local amount = tonumber(RA[4])
if not st[1] or st[2] ~= '1' then return {0, '', forgiven} end
if tonumber(st[3]) < amount then return {0, st[1], forgiven} end
local unspent = redis.call('HINCRBY', RK[1], 'unspent', -amount)
local held = redis.call('HINCRBY', RK[1], 'held', amount)
redis.call('HSET', RK[2], RA[3], st[1] .. '|' .. amount)
redis.call('ZADD', RK[3], RA[5], RA[2] .. ' ' .. RA[3])
return {1, st[1], forgiven, unspent, held, st[4] or ''}`;

// The hold alone, for a caller without a counter call. KEYS, ARGV as the rider's RK, RA.
const HOLD = `local over, RK, RA = false, KEYS, ARGV
${HOLD_RIDER}`;

// ARGV: prefix, releases… Returns the forgiven keys.
const RELEASE = `${RELEASE_FN}${RELEASE_ALL_FN}
return releaseAll(ARGV[1], ARGV, 2)`;

// KEYS: hold expiries. ARGV: now, prefix. Releases, charging nothing, the holds past their expiry.
const REAP_HOLDS = `${RELEASE_FN}
local out = {}
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 100)) do
  redis.call('ZREM', KEYS[1], m)
  local acc, key = string.match(m, '^(%S+) (.+)$')
  if release(ARGV[2], acc, key, 0, '') ~= 0 then out[#out + 1] = key end
end
return out`;

// KEYS: wallet, holds. ARGV: lease. The holds under the lease no longer name it.
const ORPHAN = `
local all = redis.call('HGETALL', KEYS[2])
for i = 1, #all, 2 do
  local lease, amount = string.match(all[i + 1], '^([^|]+)|(%d+)$')
  if lease == ARGV[1] then redis.call('HSET', KEYS[2], all[i], '-|' .. amount) end
end
if redis.call('HGET', KEYS[1], 'lease') == ARGV[1] then redis.call('HSET', KEYS[1], 'held', 0) end`;

const SCRIPTS = {
  hold: script(HOLD),
  release: script(RELEASE),
  reapHolds: script(REAP_HOLDS),
  orphan: script(ORPHAN),
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

  #holds(accountId: string): string {
    return `${this.#prefix}wal-hold:${accountId}`;
  }

  #lock(accountId: string): string {
    return `${this.#prefix}wal-lock:${accountId}`;
  }

  get #dirty(): string {
    return `${this.#prefix}wal-dirty`;
  }

  #run(s: Script, keys: readonly string[], ...args: (string | number)[]): Promise<unknown> {
    return runScript(this.#redis, s, keys, ...args);
  }

  #marker(accountId: string, name: string): string {
    return `${this.#prefix}wal-paid:${accountId}:${name}`;
  }

  async spend(accountId: string, record: ChargeRecord, rememberMs = 0, marker?: PaidMarker): Promise<SpendResult> {
    const { key, amountMicro, ...rest } = record;
    // Without a marker its key is still named (a script declares every key it may touch), never written.
    const keys = [this.#wallet(accountId), this.#log(accountId), this.#dirty, `${this.#prefix}wal-key:${key}`, this.#marker(accountId, marker?.name ?? '')];
    const reply = (await this.#run(SCRIPTS.spend, keys, key, amountMicro, JSON.stringify(rest), accountId, rememberMs, marker?.ttlMs ?? 0)) as [
      number,
      string,
      string?,
      string?,
      string?,
    ];
    const [status, lease, unspent, bal, held] = reply;
    if (status === 0) return { ok: false, closedLeaseId: lease || undefined };
    return { ok: true, leaseId: lease, unspentMicro: Number(unspent), heldMicro: Number(held ?? 0), bucketsMicro: bal ? Number(bal) : undefined, duplicate: status === 2 };
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

  async paidMarker(accountId: string, name: string): Promise<string | undefined> {
    return (await this.#redis.get(this.#marker(accountId, name))) ?? undefined;
  }

  async markPaid(accountId: string, marker: PaidMarker, chargeKey: string): Promise<void> {
    await this.#redis.set(this.#marker(accountId, marker.name), chargeKey, 'PX', marker.ttlMs);
  }

  async forgetPaid(accountId: string, name: string): Promise<void> {
    await this.#redis.del(this.#marker(accountId, name));
  }

  async spent(accountId: string, key: string): Promise<boolean> {
    const [inLog, remembered] = await Promise.all([this.#redis.hexists(this.#log(accountId), key), this.#redis.exists(`${this.#prefix}wal-key:${key}`)]);
    return inLog === 1 || remembered === 1;
  }

  async available(accountId: string): Promise<number> {
    const [open, unspent, held] = await this.#redis.hmget(this.#wallet(accountId), 'open', 'unspent', 'held');
    return open === '1' ? Number(unspent) + Number(held ?? 0) : 0;
  }

  async storedBalance(accountId: string): Promise<number | undefined> {
    const [open, unspent, held, bal] = await this.#redis.hmget(this.#wallet(accountId), 'open', 'unspent', 'held', 'bal');
    if (bal === null) return undefined;
    return Number(bal) + (open === '1' ? Number(unspent) + Number(held ?? 0) : 0);
  }

  holdRider(accountId: string, hold: HoldRequest, releases: readonly Release[]): TakeRider {
    return { lua: HOLD_RIDER, keys: this.#holdKeys(accountId), args: this.#holdArgs(accountId, hold, releases) };
  }

  holdReply(reply: unknown): { hold: HoldResult; forgiven: string[] } {
    const [status, lease, forgiven, unspent, held, bal] = reply as [number, string, string[], number?, number?, string?];
    if (status !== 1) return { hold: { ok: false, leased: Boolean(lease) }, forgiven };
    return { hold: { ok: true, leaseId: lease, unspentMicro: Number(unspent), heldMicro: Number(held), bucketsMicro: bal ? Number(bal) : undefined }, forgiven };
  }

  async hold(accountId: string, hold: HoldRequest): Promise<HoldResult> {
    return this.holdReply(await this.#run(SCRIPTS.hold, this.#holdKeys(accountId), ...this.#holdArgs(accountId, hold, []))).hold;
  }

  async release(releases: readonly Release[]): Promise<string[]> {
    if (!releases.length) return [];
    return (await this.#run(SCRIPTS.release, [], this.#prefix, ...releaseArgs(releases))) as string[];
  }

  async reapHolds(nowMs: number): Promise<string[]> {
    return (await this.#run(SCRIPTS.reapHolds, [`${this.#prefix}wal-holds`], nowMs, this.#prefix)) as string[];
  }

  async held(accountId: string, leaseId: string): Promise<number> {
    const [lease, held] = await this.#redis.hmget(this.#wallet(accountId), 'lease', 'held');
    return lease === leaseId ? Number(held ?? 0) : 0;
  }

  async orphanHolds(accountId: string, leaseId: string): Promise<void> {
    await this.#run(SCRIPTS.orphan, [this.#wallet(accountId), this.#holds(accountId)], leaseId);
  }

  #holdKeys(accountId: string): string[] {
    return [this.#wallet(accountId), this.#holds(accountId), `${this.#prefix}wal-holds`];
  }

  #holdArgs(accountId: string, hold: HoldRequest, releases: readonly Release[]): (string | number)[] {
    return [this.#prefix, accountId, hold.key, hold.amountMicro, hold.expiresAtMs, ...releaseArgs(releases)];
  }
}

/** Four arguments per release: account, key, charge, record json (as the pending log keeps it). */
function releaseArgs(releases: readonly Release[]): (string | number)[] {
  const args: (string | number)[] = [];
  for (const { accountId, record } of releases) {
    const { key, amountMicro, ...rest } = record;
    args.push(accountId, key, amountMicro, JSON.stringify(rest));
  }
  return args;
}

function parseRecord(accountId: string, key: string, value: string): PendingCharge {
  const [leaseId = '', amount = '0'] = value.split('|', 2);
  const rest = JSON.parse(value.slice(leaseId.length + amount.length + 2)) as Omit<ChargeRecord, 'key' | 'amountMicro'>;
  return { ...rest, key, amountMicro: Number(amount), accountId, leaseId };
}
