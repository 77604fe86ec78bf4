/**
 * Deliveries under a charge, shared by every API pod (DECISIONS §3 "Refunds"): a charge stands as
 * soon as any delivery under it has completed; it is refunded only when no delivery under it
 * completed and none is in flight. One charge can carry many deliveries: the download that paid
 * for an export file, the range reads that follow it, the POST that re-reads a SQL window.
 *
 * Each in-flight delivery holds an entry that expires unless its pod renews it, so a pod that dies
 * mid-delivery cannot hold a charge open forever: `reap` hands such charges to the reconciler.
 * A charge's state moves `open → done` (a delivery completed: it can never be refunded) or
 * `open → refunding → refunded` (the last delivery broke and nothing completed). A charge that is
 * refunding or refunded accepts no new delivery; the caller charges anew under the window's next key.
 *
 * Bytes delivered count (`bytes-delivered.ts`): a broken delivery of a file says which bytes it
 * handed to its connection. The distinct bytes of a window's file delivered by broken deliveries
 * are kept per window base (across its refunded charges), and once they reach half the file the
 * charge moves to `done` at once. Claiming the refund of a charge under which bytes went out takes
 * one of the account's partial refunds of the UTC day; when none is left the charge moves to `done`.
 */
import { type ByteSpan, type BytesDelivered, PARTIAL_REFUNDS_PER_DAY, bytesToStand, carriesBytes, coveredBytes, mergeSpans } from './bytes-delivered.ts';
import { accountOfChargeKey, windowBaseOf } from './charge-keys.ts';
import type { BeginPart } from './reread-rider.ts';
import { utcDay } from '../quota.ts';

export interface DeliveryTracker {
  /** Registers a delivery; false when the charge is being (or was) refunded. */
  begin(chargeKey: string, deliveryId: string, expiresAtMs: number): Promise<boolean>;
  /**
   * `begin` as a part of a paid re-read's counter call, on the charge its marker names
   * (`reread-rider.ts`); undefined: not on this tracker's store now (in-process, or Redis failing).
   */
  beginRider?(deliveryId: string, expiresAtMs: number): BeginPart | undefined;
  /** Renews a long delivery's entry. */
  touch(chargeKey: string, deliveryId: string, expiresAtMs: number): Promise<void>;
  /**
   * The delivery went out whole: the charge stands from now on. `withNextWrite`: the step may wait
   * for the store's next call to leave with (a delivery under a charge that was paid before it).
   */
  complete(chargeKey: string, deliveryId: string, withNextWrite?: boolean): Promise<void>;
  /** The delivery never carried the charge (the charge was refused): forget it, decide nothing. */
  release(chargeKey: string, deliveryId: string): Promise<void>;
  /**
   * The delivery broke, having delivered `delivered` of the window's file (a file's window only).
   * True when the caller must refund now: nothing completed, nothing in flight, and the bytes rule
   * lets the charge go.
   */
  abandon(chargeKey: string, deliveryId: string, nowMs: number, delivered?: BytesDelivered): Promise<boolean>;
  /** Charges whose deliveries all expired without completing; each is returned once, as refunding. */
  reap(nowMs: number): Promise<string[]>;
  /** The refund of a charge returned by `abandon` or `reap` is in the ledger. */
  refunded(chargeKey: string): Promise<void>;
  close(): Promise<void>;
}

/** How long a charge's state is remembered: longer than the longest window (24 h). */
export const DELIVERY_STATE_TTL_MS = 25 * 60 * 60 * 1000;

type State = 'done' | 'refunding' | 'refunded';

interface Entry {
  readonly inFlight: Map<string, number>;
  state?: State;
  /** A broken delivery under this charge delivered bytes: its refund is a partial one. */
  partial?: boolean;
}

/** The embedded default's tracker: one process, so one map. Same rules as the Redis tracker. */
export class MemoryDeliveryTracker implements DeliveryTracker {
  readonly #charges = new Map<string, Entry>();
  /** Window base → distinct bytes of its file that broken deliveries delivered. */
  readonly #delivered = new Map<string, ByteSpan[]>();
  /** `<account>:<UTC day>` → partial refunds claimed. */
  readonly #partialRefunds = new Map<string, number>();

  #entry(chargeKey: string): Entry {
    let entry = this.#charges.get(chargeKey);
    if (!entry) this.#charges.set(chargeKey, (entry = { inFlight: new Map() }));
    return entry;
  }

  async begin(chargeKey: string, deliveryId: string, expiresAtMs: number): Promise<boolean> {
    const entry = this.#entry(chargeKey);
    if (entry.state === 'refunding' || entry.state === 'refunded') return false;
    entry.inFlight.set(deliveryId, expiresAtMs);
    return true;
  }

  async touch(chargeKey: string, deliveryId: string, expiresAtMs: number): Promise<void> {
    const inFlight = this.#charges.get(chargeKey)?.inFlight;
    if (inFlight?.has(deliveryId)) inFlight.set(deliveryId, expiresAtMs);
  }

  async complete(chargeKey: string, deliveryId: string): Promise<void> {
    const entry = this.#entry(chargeKey);
    entry.inFlight.delete(deliveryId);
    if (entry.state === undefined) this.#stand(chargeKey, entry);
  }

  async release(chargeKey: string, deliveryId: string): Promise<void> {
    this.#charges.get(chargeKey)?.inFlight.delete(deliveryId);
  }

  async abandon(chargeKey: string, deliveryId: string, nowMs: number, delivered?: BytesDelivered): Promise<boolean> {
    const entry = this.#charges.get(chargeKey);
    // A delivery this tracker never saw began elsewhere (see ResilientDeliveryTracker): decide nothing.
    if (!entry?.inFlight.delete(deliveryId)) return false;
    if (entry.state === undefined && delivered && this.#deliveredEnough(chargeKey, entry, delivered)) {
      this.#stand(chargeKey, entry);
      return false;
    }
    return this.#claimRefund(chargeKey, entry, nowMs);
  }

  async reap(nowMs: number): Promise<string[]> {
    const reaped: string[] = [];
    for (const [chargeKey, entry] of this.#charges) {
      if (entry.inFlight.size > 0 && this.#claimRefund(chargeKey, entry, nowMs)) reaped.push(chargeKey);
    }
    return reaped;
  }

  async refunded(chargeKey: string): Promise<void> {
    this.#entry(chargeKey).state = 'refunded';
  }

  async close(): Promise<void> {}

  /** Adds what a broken delivery delivered to its window's file; true once that is enough to stand. */
  #deliveredEnough(chargeKey: string, entry: Entry, delivered: BytesDelivered): boolean {
    if (!carriesBytes(delivered.span)) return false;
    entry.partial = true;
    const base = windowBaseOf(chargeKey);
    const spans = mergeSpans(this.#delivered.get(base) ?? [], delivered.span);
    this.#delivered.set(base, spans);
    return coveredBytes(spans) >= bytesToStand(delivered.sizeBytes);
  }

  /** The charge stands: its window is paid, so the bytes its file's broken deliveries took are forgotten. */
  #stand(chargeKey: string, entry: Entry): void {
    entry.state = 'done';
    this.#delivered.delete(windowBaseOf(chargeKey));
  }

  /**
   * Drops expired deliveries; claims the refund when none is left and nothing completed. A partial
   * refund takes one of the account's day; when none is left, the charge stands instead.
   */
  #claimRefund(chargeKey: string, entry: Entry, nowMs: number): boolean {
    for (const [id, expiresAt] of entry.inFlight) if (expiresAt <= nowMs) entry.inFlight.delete(id);
    if (entry.inFlight.size > 0 || entry.state !== undefined) return false;
    if (entry.partial) {
      const day = `${accountOfChargeKey(chargeKey)}:${utcDay(new Date(nowMs))}`;
      const used = this.#partialRefunds.get(day) ?? 0;
      if (used >= PARTIAL_REFUNDS_PER_DAY) {
        entry.state = 'done';
        return false;
      }
      this.#partialRefunds.set(day, used + 1);
    }
    entry.state = 'refunding';
    return true;
  }
}

/**
 * The Redis tracker with the in-process one as insurance, like the rate limiters: while Redis
 * fails, deliveries are tracked per pod, so downloads and SQL keep answering. What that costs:
 * a delivery that began in Redis and ends during the outage decides no refund (its charge stands,
 * or is refunded later by the reconciler if its Redis entry expires without a completion), and a
 * file's delivered bytes and the day's partial refunds are counted per pod meanwhile.
 */
export class ResilientDeliveryTracker implements DeliveryTracker {
  readonly #primary: DeliveryTracker;
  readonly #fallback = new MemoryDeliveryTracker();
  readonly #onFallback: (error: unknown) => void;
  /** Reported once per outage, not once per call. */
  #failing = false;

  constructor(primary: DeliveryTracker, onFallback: (error: unknown) => void = () => undefined) {
    this.#primary = primary;
    this.#onFallback = onFallback;
  }

  async #either<T>(call: (tracker: DeliveryTracker) => Promise<T>): Promise<T> {
    try {
      const result = await call(this.#primary);
      this.#failing = false;
      return result;
    } catch (error) {
      if (!this.#failing) this.#onFallback(error);
      this.#failing = true;
      return call(this.#fallback);
    }
  }

  begin(chargeKey: string, deliveryId: string, expiresAtMs: number): Promise<boolean> {
    return this.#either((t) => t.begin(chargeKey, deliveryId, expiresAtMs));
  }

  beginRider(deliveryId: string, expiresAtMs: number): BeginPart | undefined {
    return this.#failing ? undefined : this.#primary.beginRider?.(deliveryId, expiresAtMs);
  }

  touch(chargeKey: string, deliveryId: string, expiresAtMs: number): Promise<void> {
    return this.#either((t) => t.touch(chargeKey, deliveryId, expiresAtMs));
  }

  complete(chargeKey: string, deliveryId: string, withNextWrite?: boolean): Promise<void> {
    return this.#either((t) => t.complete(chargeKey, deliveryId, withNextWrite));
  }

  release(chargeKey: string, deliveryId: string): Promise<void> {
    return this.#either((t) => t.release(chargeKey, deliveryId));
  }

  async abandon(chargeKey: string, deliveryId: string, nowMs: number, delivered?: BytesDelivered): Promise<boolean> {
    // Asked of both: the delivery began in whichever one answered its `begin`.
    if (await this.#fallback.abandon(chargeKey, deliveryId, nowMs, delivered)) return true;
    return this.#either((t) => (t === this.#fallback ? Promise.resolve(false) : t.abandon(chargeKey, deliveryId, nowMs, delivered)));
  }

  async reap(nowMs: number): Promise<string[]> {
    const local = await this.#fallback.reap(nowMs);
    return [...local, ...(await this.#either((t) => (t === this.#fallback ? Promise.resolve([]) : t.reap(nowMs))))];
  }

  async refunded(chargeKey: string): Promise<void> {
    await this.#fallback.refunded(chargeKey);
    await this.#either((t) => (t === this.#fallback ? Promise.resolve() : t.refunded(chargeKey)));
  }

  close(): Promise<void> {
    return this.#primary.close();
  }
}
