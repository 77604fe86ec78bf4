/**
 * A paid SQL re-read in one Redis call (DECISIONS §3): the script that takes the request's burst
 * count reads the re-read marker and, when there is one, begins the response's delivery on the
 * charge the marker names and reads the balance the response reports (the wallet's stored buckets).
 * Its Lua is a rider of the counter call (`TakeRider`); the delivery's begin is the tracker's own
 * (`BEGIN_DELIVERY`), the balance the wallet's `storedBalance`, read from the same fields.
 */
import type { TakeRider } from '../limiter/types.ts';

/** Registers delivery `id` under `charge` unless it is being or was refunded: 1, else 0. */
export const BEGIN_DELIVERY = `
local function beginDelivery(deliveries, state, open, id, expiry, stateTtl, charge)
  local st = redis.call('GET', state)
  if st == 'refunding' or st == 'refunded' then return 0 end
  redis.call('ZADD', deliveries, expiry, id)
  redis.call('PEXPIRE', deliveries, stateTtl)
  redis.call('ZADD', open, 'GT', expiry, charge)
  return 1
end`;

/**
 * RK: the marker, the wallet, the deliveries' open set. RA: the deliveries' key prefix and state key
 * prefix, the delivery id, its expiry, the state ttl, then the wallet's fields its stored balance
 * reads (`Wallet.storedBalance`). Returns {marker, begun, fields…}; nils are '' (a nil ends a list).
 */
export const REREAD_RIDER = `${BEGIN_DELIVERY}
local marker = redis.call('GET', RK[1])
if not marker then return {''} end
local out = {marker, beginDelivery(RA[1] .. marker, RA[2] .. marker, RK[3], RA[3], RA[4], RA[5], marker)}
local fields = {}
for i = 6, #RA do fields[#fields + 1] = RA[i] end
for _, v in ipairs(redis.call('HMGET', RK[2], unpack(fields))) do out[#out + 1] = v or '' end
return out`;

/** A delivery's part of the re-read rider: the tracker's keys and arguments (`DeliveryTracker.beginRider`). */
export interface BeginPart {
  readonly keys: readonly string[];
  readonly args: readonly (string | number)[];
}

export interface RereadReply {
  /** The charge key the marker names; undefined: no marker. */
  readonly paidKey?: string;
  /** A delivery was begun on `paidKey`. */
  readonly begun: boolean;
  /** The balance to report, as `Wallet.storedBalance` says it; undefined when it cannot. */
  readonly balanceMicro?: number;
}

/** The marker read as a counter call's rider, and how its reply reads (undefined: the rider did not run). */
export interface PaidMarkerRider extends TakeRider {
  read(reply: unknown): RereadReply | undefined;
}

/** `REREAD_RIDER`'s reply: the marker, whether the delivery was begun, the wallet's fields (null for none). */
export function rereadFieldsOf(reply: unknown): { marker: string; begun: boolean; fields: (string | null)[] } | undefined {
  if (!Array.isArray(reply)) return undefined;
  const [marker, begun, ...fields] = reply as [string, number?, ...string[]];
  return { marker, begun: begun === 1, fields: fields.map((v) => (v === '' ? null : v)) };
}
