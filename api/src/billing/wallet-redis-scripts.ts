/**
 * The Redis wallet's Lua scripts (`wallet-redis.ts`; the rules are in `wallet.ts`): each step that
 * reads and writes the wallet is one script, so it is atomic. The keys they use are listed in
 * `wallet-redis.ts`.
 */
import { script } from '../redis/scripts.ts';

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
export const MARKER_RIDER = `return redis.call('GET', RK[1]) or ''`;

// The rider of a request's counter call (`TakeRider`): first the releases it carries, then, unless a
// counter refused the request, the hold. RK: wallet, holds, hold expiries. RA: prefix, account, key,
// amount, expiry, releases… Returns {1, lease, unspent, held, bal|'', whole 1|0} or {0, lease if open but short|''}.
export const HOLD_RIDER = `${RELEASE_FN}${RELEASE_ALL_FN}
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

export const SCRIPTS = {
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
