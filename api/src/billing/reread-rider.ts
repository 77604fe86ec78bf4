/**
 * A paid SQL re-read in one Redis call (DECISIONS §3): the script that takes the request's burst
 * count reads the re-read marker and, when there is one, begins the response's delivery on the
 * charge the marker names and reads the balance the response reports (the wallet's stored buckets).
 * Its Lua is a rider of the counter call (`TakeRider`); the delivery's begin is the tracker's own
 * (`BEGIN_DELIVERY`), the balance the wallet's `storedBalance`.
 */

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
 * prefix, the delivery id, its expiry, the state ttl. Nils become '' (a nil would end the list).
 */
export const REREAD_RIDER = `${BEGIN_DELIVERY}
local marker = redis.call('GET', RK[1])
if not marker then return {''} end
local begun = beginDelivery(RA[1] .. marker, RA[2] .. marker, RK[3], RA[3], RA[4], RA[5], marker)
local b = redis.call('HMGET', RK[2], 'open', 'unspent', 'held', 'bal')
return {marker, begun, b[1] or '', b[2] or '', b[3] or '', b[4] or ''}`;

/** A delivery's part of the re-read rider: the tracker's keys and arguments (`DeliveryTracker.beginRider`). */
export interface BeginPart {
  readonly keys: readonly string[];
  readonly args: readonly (string | number)[];
}

export interface RereadReply {
  /** The charge key the marker names; undefined: no marker. */
  readonly paidKey?: string;
  /** The delivery was begun on `paidKey`. */
  readonly begun: boolean;
  /** The balance to report, as `Wallet.storedBalance`; undefined when no buckets are stored. */
  readonly balanceMicro?: number;
}

/** The rider's reply; undefined when it did not run (Redis down) or is not this rider's. */
export function rereadReplyOf(reply: unknown): RereadReply | undefined {
  if (!Array.isArray(reply)) return undefined;
  const [marker, begun, open, unspent, held, bal] = reply as [string, number?, string?, string?, string?, string?];
  if (!marker) return { begun: false };
  const balanceMicro = bal ? Number(bal) + (open === '1' ? Number(unspent) + Number(held || 0) : 0) : undefined;
  return { paidKey: marker, begun: begun === 1, ...(balanceMicro === undefined ? {} : { balanceMicro }) };
}
