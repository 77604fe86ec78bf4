/**
 * The wallet on Redis, shared by every API pod (rules in `wallet.ts`), so one account's traffic on
 * two pods spends one lease. Each step that reads and writes is one Lua script.
 *
 * Keys (per account): `<prefix>wal:<account>` (hash: lease, partial 1|0 (opened on a later part of
 * its lease: Redis lost the earlier ones), open 1|0, unspent, held, bal, balv),
 * `<prefix>wal-hold:<account>` (hash: charge key → `<lease>|<amount>`, lease `-` once orphaned);
 * and `<prefix>wal-holds` (sorted set: `<account> <charge key>` → hold expiry ms),
 * `<prefix>wal-key:<charge key>` (a window charge's key, remembered past its flush: its lease),
 * `<prefix>wal-paid:<account>:<name>` (a re-read marker: the charge key of a paid result, for its window).
 * No charge record is kept here: each pod's journal holds the charges it reported until PostgreSQL
 * has them (`journal.ts`). Every key can be lost: the wallet is then taken anew from PostgreSQL.
 */
import type { Redis } from 'ioredis';
import type { TakeRider } from '../limiter/types.ts';
import { type BeginPart, type PaidMarkerRider, REREAD_RIDER, type RereadReply, rereadFieldsOf } from './reread-rider.ts';
import { type Script, runScript, script } from '../redis/scripts.ts';
import type { Buckets, ChargeRecord, HoldRequest, HoldResult, PaidMarker, Release, SpendResult, Wallet } from './wallet.ts';

// KEYS: wallet, the key's memory, the re-read marker. ARGV: charge key, amount, how long to
// remember the key (0: a lookup's, never asked again), the marker's life (0: no marker).
// Returns {1|2 (spent|duplicate), lease, unspent, bal|'', held, whole 1|0} or {0, closed lease|''}.
const SPEND = `
local bal = redis.call('HGET', KEYS[1], 'bal') or ''
local whole = (redis.call('HGET', KEYS[1], 'lease') and redis.call('HGET', KEYS[1], 'partial') ~= '1') and 1 or 0
local held = redis.call('HGET', KEYS[1], 'open') == '1' and (redis.call('HGET', KEYS[1], 'held') or '0') or '0'
local remembered = tonumber(ARGV[3]) > 0 and redis.call('GET', KEYS[2])
if remembered then
  local unspent = redis.call('HGET', KEYS[1], 'open') == '1' and redis.call('HGET', KEYS[1], 'unspent') or '0'
  return {2, remembered, unspent, bal, held, whole}
end
local lease = redis.call('HGET', KEYS[1], 'lease')
if not lease then return {0, ''} end
if redis.call('HGET', KEYS[1], 'open') ~= '1' then return {0, lease} end
if tonumber(redis.call('HGET', KEYS[1], 'unspent')) < tonumber(ARGV[2]) then return {0, ''} end
local unspent = redis.call('HINCRBY', KEYS[1], 'unspent', -tonumber(ARGV[2]))
if tonumber(ARGV[3]) > 0 then redis.call('SET', KEYS[2], lease, 'PX', ARGV[3]) end
if tonumber(ARGV[4]) > 0 then redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[4]) end
return {1, lease, tostring(unspent), bal, held, whole}`;

// KEYS: wallet. ARGV: buckets micro, buckets version.
const STORE_BUCKETS = `
local v = tonumber(redis.call('HGET', KEYS[1], 'balv') or '-1')
if v < tonumber(ARGV[2]) then redis.call('HSET', KEYS[1], 'bal', ARGV[1], 'balv', ARGV[2]) end`;

// KEYS: wallet. ARGV: lease, amount to add, buckets micro, buckets version, the lease's part (0: its first).
const FUND = `
if redis.call('HGET', KEYS[1], 'lease') == ARGV[1] then
  if redis.call('HGET', KEYS[1], 'open') == '1' then redis.call('HINCRBY', KEYS[1], 'unspent', ARGV[2]) end
else
  redis.call('HSET', KEYS[1], 'lease', ARGV[1], 'partial', tonumber(ARGV[5]) > 0 and '1' or '0', 'open', '1', 'unspent', ARGV[2], 'held', 0)
end
${STORE_BUCKETS.replace(/ARGV\[2\]/g, 'ARGV[4]').replace(/ARGV\[1\]/g, 'ARGV[3]')}`;

// KEYS: wallet. ARGV: lease, amount.
const CREDIT = `
if redis.call('HGET', KEYS[1], 'lease') == ARGV[1] and redis.call('HGET', KEYS[1], 'open') == '1' then
  redis.call('HINCRBY', KEYS[1], 'unspent', ARGV[2])
end`;

// KEYS: wallet. ARGV: lease.
const CLOSE = `
if redis.call('HGET', KEYS[1], 'lease') == ARGV[1] then redis.call('HSET', KEYS[1], 'open', '0') end`;

// Ends one hold (rules in wallet.ts): what it held beyond its charge goes back to the spendable
// credit when its lease is still the wallet's (the charge is in the pod's journal, not here).
// Returns 0: no such hold (already released or reaped, or lost with Redis), 1: done.
const RELEASE_FN = `
local function release(prefix, acc, key, t)
  local w, hh = prefix .. 'wal:' .. acc, prefix .. 'wal-hold:' .. acc
  local h = redis.call('HGET', hh, key)
  if not h then return 0 end
  redis.call('HDEL', hh, key)
  redis.call('ZREM', prefix .. 'wal-holds', acc .. ' ' .. key)
  local lease, amount = string.match(h, '^([^|]+)|(%d+)$')
  amount = tonumber(amount)
  local cur = redis.call('HMGET', w, 'lease', 'open')
  if cur[1] == lease then
    redis.call('HINCRBY', w, 'held', -amount)
    if cur[2] == '1' then redis.call('HINCRBY', w, 'unspent', amount - t) end
  end
  return 1
end`;

// Releases from ARGV[i..] (3 per release: account, key, charge).
const RELEASE_ALL_FN = `
local function releaseAll(prefix, args, from)
  for i = from, #args, 3 do release(prefix, args[i], args[i + 1], tonumber(args[i + 2])) end
end`;

// A re-read marker read in a request's counter call: '' for none (a nil would end the reply's list).
const MARKER_RIDER = `return redis.call('GET', RK[1]) or ''`;

/** The wallet's fields its stored balance reads, here and in a paid re-read's first call (`reread-rider.ts`). */
const BALANCE_FIELDS = ['bal', 'lease', 'partial', 'open', 'unspent', 'held'];

/**
 * The whole balance from the stored buckets and the wallet's part; undefined when no buckets are
 * stored or the wallet's part is PostgreSQL's to tell (`walletPart`).
 */
function storedBalanceOf([bal, ...wallet]: readonly (string | null | undefined)[]): number | undefined {
  const available = walletPart(wallet.map((v) => v ?? null));
  return bal === null || bal === undefined || available === undefined ? undefined : Number(bal) + available;
}

// The rider of a request's counter call (`TakeRider`): first the releases it carries, then, unless a
// counter refused the request, the hold. RK: wallet, holds, hold expiries. RA: prefix, account, key,
// amount, expiry, releases… Returns {1, lease, unspent, held, bal|'', whole 1|0} or {0, lease if open but short|''}.
const HOLD_RIDER = `${RELEASE_FN}${RELEASE_ALL_FN}
releaseAll(RA[1], RA, 6)
if over then return {0, ''} end
local st = redis.call('HMGET', RK[1], 'lease', 'open', 'unspent', 'bal', 'partial')
local amount = tonumber(RA[4])
if not st[1] or st[2] ~= '1' then return {0, ''} end
if tonumber(st[3]) < amount then return {0, st[1]} end
local unspent = redis.call('HINCRBY', RK[1], 'unspent', -amount)
local held = redis.call('HINCRBY', RK[1], 'held', amount)
redis.call('HSET', RK[2], RA[3], st[1] .. '|' .. amount)
redis.call('ZADD', RK[3], RA[5], RA[2] .. ' ' .. RA[3])
return {1, st[1], unspent, held, st[4] or '', st[5] == '1' and 0 or 1}`;

// The hold alone, for a caller without a counter call. KEYS, ARGV as the rider's RK, RA.
const HOLD = `local over, RK, RA = false, KEYS, ARGV
${HOLD_RIDER}`;

// ARGV: prefix, releases…
const RELEASE = `${RELEASE_FN}${RELEASE_ALL_FN}
releaseAll(ARGV[1], ARGV, 2)`;

// KEYS: hold expiries. ARGV: now, prefix. Releases, charging nothing, the holds past their expiry.
const REAP_HOLDS = `${RELEASE_FN}
local out = {}
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 100)) do
  redis.call('ZREM', KEYS[1], m)
  local acc, key = string.match(m, '^(%S+) (.+)$')
  if release(ARGV[2], acc, key, 0) ~= 0 then out[#out + 1] = key end
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
  close: script(CLOSE),
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

  #holds(accountId: string): string {
    return `${this.#prefix}wal-hold:${accountId}`;
  }

  #run(s: Script, keys: readonly string[], ...args: (string | number)[]): Promise<unknown> {
    return runScript(this.#redis, s, keys, ...args);
  }

  #marker(accountId: string, name: string): string {
    return `${this.#prefix}wal-paid:${accountId}:${name}`;
  }

  async spend(accountId: string, record: ChargeRecord, rememberMs = 0, marker?: PaidMarker): Promise<SpendResult> {
    // Without a marker its key is still named (a script declares every key it may touch), never written.
    const keys = [this.#wallet(accountId), `${this.#prefix}wal-key:${record.key}`, this.#marker(accountId, marker?.name ?? '')];
    const reply = (await this.#run(SCRIPTS.spend, keys, record.key, record.amountMicro, rememberMs, marker?.ttlMs ?? 0)) as [number, string, string?, string?, string?, number?];
    const [status, lease, unspent, bal, held, whole] = reply;
    if (status === 0) return { ok: false, closedLeaseId: lease || undefined };
    return { ok: true, leaseId: lease, unspentMicro: Number(unspent), heldMicro: Number(held ?? 0), bucketsMicro: bal ? Number(bal) : undefined, duplicate: status === 2, whole: whole === 1 };
  }

  async fund(accountId: string, leaseId: string, addMicro: number, buckets: Buckets, part: number): Promise<void> {
    await this.#run(SCRIPTS.fund, [this.#wallet(accountId)], leaseId, addMicro, buckets.micro, buckets.version, part);
  }

  async credit(accountId: string, leaseId: string, micro: number): Promise<void> {
    await this.#run(SCRIPTS.credit, [this.#wallet(accountId)], leaseId, micro);
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

  async openLeases(): Promise<{ accountId: string; leaseId: string }[]> {
    // Leases in Redis outlive this pod: other pods, or the reconciler at expiry, settle them.
    return [];
  }

  async paidMarker(accountId: string, name: string): Promise<string | undefined> {
    return (await this.#redis.get(this.#marker(accountId, name))) ?? undefined;
  }

  paidMarkerRider(accountId: string, name: string, begin?: BeginPart): PaidMarkerRider {
    const marker = this.#marker(accountId, name);
    if (!begin) return { lua: MARKER_RIDER, keys: [marker], args: [], read: (reply) => (typeof reply === 'string' ? { ...(reply ? { paidKey: reply } : {}), begun: false } : undefined) };
    const read = (reply: unknown): RereadReply | undefined => {
      const fields = rereadFieldsOf(reply);
      if (!fields?.marker) return fields && { begun: false };
      const balanceMicro = storedBalanceOf(fields.fields);
      return { paidKey: fields.marker, begun: fields.begun, ...(balanceMicro === undefined ? {} : { balanceMicro }) };
    };
    return { lua: REREAD_RIDER, keys: [marker, this.#wallet(accountId), ...begin.keys], args: [...begin.args, ...BALANCE_FIELDS], read };
  }

  async markPaid(accountId: string, marker: PaidMarker, chargeKey: string): Promise<void> {
    await this.#redis.set(this.#marker(accountId, marker.name), chargeKey, 'PX', marker.ttlMs);
  }

  async forgetPaid(accountId: string, name: string): Promise<void> {
    await this.#redis.del(this.#marker(accountId, name));
  }

  async spent(accountId: string, key: string): Promise<boolean> {
    return (await this.#redis.exists(`${this.#prefix}wal-key:${key}`)) === 1;
  }

  async available(accountId: string): Promise<number | undefined> {
    return walletPart(await this.#redis.hmget(this.#wallet(accountId), 'lease', 'partial', 'open', 'unspent', 'held'));
  }

  async storedBalance(accountId: string): Promise<number | undefined> {
    return storedBalanceOf(await this.#redis.hmget(this.#wallet(accountId), ...BALANCE_FIELDS));
  }

  holdRider(accountId: string, hold: HoldRequest, releases: readonly Release[]): TakeRider {
    return { lua: HOLD_RIDER, keys: this.#holdKeys(accountId), args: this.#holdArgs(accountId, hold, releases) };
  }

  holdReply(reply: unknown): HoldResult {
    const [status, lease, unspent, held, bal, whole] = reply as [number, string, number?, number?, string?, number?];
    if (status !== 1) return { ok: false, leased: Boolean(lease) };
    return { ok: true, leaseId: lease, unspentMicro: Number(unspent), heldMicro: Number(held), bucketsMicro: bal ? Number(bal) : undefined, whole: whole === 1 };
  }

  async hold(accountId: string, hold: HoldRequest): Promise<HoldResult> {
    return this.holdReply(await this.#run(SCRIPTS.hold, this.#holdKeys(accountId), ...this.#holdArgs(accountId, hold, [])));
  }

  async release(releases: readonly Release[]): Promise<void> {
    if (releases.length) await this.#run(SCRIPTS.release, [], this.#prefix, ...releaseArgs(releases));
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

/** The wallet's part of the balance from its hash's lease, partial, open, unspent, held: undefined unless it holds the whole lease. */
function walletPart([lease, partial, open, unspent, held]: (string | null)[]): number | undefined {
  if (lease === null || lease === undefined || partial === '1') return undefined;
  return open === '1' ? Number(unspent) + Number(held ?? 0) : 0;
}

/** Three short arguments per release: account, key, charge (the record itself stays in the pod's journal). */
function releaseArgs(releases: readonly Release[]): (string | number)[] {
  const args: (string | number)[] = [];
  for (const { accountId, record } of releases) args.push(accountId, record.key, record.amountMicro);
  return args;
}
