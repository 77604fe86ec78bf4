/**
 * Who gets the next slot (a query worker) and when (DECISIONS §4 Fair shares, Capacity classes),
 * apart from what a slot is.
 * - One tenant holds at most `perTenant` slots at once, so even many runaways from one caller leave
 *   slots for everyone else; its other requests wait their turn.
 * - The free class holds at most its share (`capacity-classes.ts`) while the paid class wants the
 *   rest. It may borrow idle paid slots but the last one, so the next paid query starts at once on
 *   a warm worker; a paid request that still finds no idle slot while the free class holds more than
 *   its share reclaims the newest borrowed slot (the holder's `reclaim` stops its query, and the
 *   slot comes back through `release`). Paid requests are never stopped so, and the paid class may
 *   take every idle slot: an uninterruptible free query must not keep a paying one waiting for its
 *   30 s, while a paid one only ever delays free queries until a slot frees.
 * - A freed slot goes to a class under its share first, then to the waiter `fair-turns.ts` picks
 *   (the tenant holding the fewest, then the one served longest ago, then the oldest).
 * - A wait ends at its `waitUntil` or when its caller stops waiting (`signal`): the queue of
 *   waiters is `wait-queue.ts`, as for the slot limiter and the ranking threads.
 */
import { type CapacityClass, type ClassShares, nextByClass } from '../capacity-classes.ts';
import { createFairTurns } from '../fair-turns.ts';
import { createWaitQueue } from '../wait-queue.ts';

export interface FairSchedulerOptions<T> {
  /** Slots one tenant may hold at once; requests without a tenant are not capped. */
  readonly perTenant: number;
  /** Each class's share of the slots (`classShares(size)`). */
  readonly shares: ClassShares;
  /** A free slot for a request of the class to take at once (marked taken by the callee), or undefined when every slot is held. */
  readonly idle: (capacityClass: CapacityClass) => T | undefined;
  /** The error of a wait that passed its `waitUntil`. */
  readonly waitedTooLong: () => unknown;
  /** The error of a wait whose caller stopped waiting. */
  readonly stopped: (signal: AbortSignal | undefined) => unknown;
}

export interface SlotRequest {
  readonly tenant: string | undefined;
  readonly capacityClass: CapacityClass;
  readonly signal?: AbortSignal;
  readonly waitUntil?: number;
  /** Stops the holder's work when its class must give a borrowed slot back; it then releases the slot. */
  readonly reclaim?: () => void;
}

export interface Grant<T> {
  readonly slot: T;
  /**
   * Gives the slot back. When a waiter may run now, it gets `handOff()` (the same slot, or a
   * replacement for a lost one) and this returns true; false: the slot is free.
   */
  release(handOff: () => T): boolean;
}

export interface FairScheduler<T> {
  /** A slot: at once when one is idle and the tenant is under its cap, else in its turn. */
  acquire(request: SlotRequest): Promise<Grant<T>>;
  /** Refuses every waiting request with `error`; no slot is handed on after this. */
  close(error: unknown): void;
}

interface Holder {
  readonly request: SlotRequest;
  reclaimed: boolean;
}

interface Waiter {
  readonly tenant: string | undefined;
  readonly capacityClass: CapacityClass;
  readonly request: SlotRequest;
}

export function createFairScheduler<T>(options: FairSchedulerOptions<T>): FairScheduler<T> {
  const queue = createWaitQueue<Waiter, Grant<T>>({ timedOut: options.waitedTooLong, stopped: options.stopped });
  const holders = new Set<Holder>();
  const turns = createFairTurns();
  const underCap = (tenant: string | undefined) => tenant === undefined || turns.heldBy(tenant) < options.perTenant;
  const heldBy = (capacityClass: CapacityClass) => [...holders].filter((h) => h.request.capacityClass === capacityClass).length;
  const underShare = (capacityClass: CapacityClass) => heldBy(capacityClass) < options.shares[capacityClass];
  /** Free beyond its share borrows an idle paid slot only while another stays idle for the paid class. */
  const mayTake = (capacityClass: CapacityClass) => {
    if (capacityClass === 'paid' || underShare('free')) return true;
    const borrowed = heldBy('free') - options.shares.free;
    return borrowed + 1 < options.shares.paid - heldBy('paid');
  };
  let closed = false;

  const grant = (request: SlotRequest, slot: T): Grant<T> => {
    const holder: Holder = { request, reclaimed: false };
    holders.add(holder);
    turns.take(request.tenant);
    return { slot, release: (handOff) => release(holder, handOff) };
  };

  const release = (holder: Holder, handOff: () => T): boolean => {
    if (!holders.delete(holder)) return false;
    turns.give(holder.request.tenant);
    if (closed) return false;
    const pick = (waiting: readonly Waiter[]) => nextByClass(waiting, underShare, turns.next, (w) => underCap(w.tenant) && mayTake(w.capacityClass));
    return queue.serve((next) => grant(next.request, handOff()), pick) !== undefined;
  };

  /** A paid request under its share found no idle slot: take back the newest slot the free class borrowed. */
  const reclaimBorrowed = () => {
    const free = [...holders].filter((h) => h.request.capacityClass === 'free' && !h.reclaimed);
    // Only what the free class holds beyond its share is borrowed; a reclaim under way already counts.
    if (free.length <= options.shares.free) return;
    const newest = free.findLast((h) => h.request.reclaim !== undefined);
    if (!newest) return;
    newest.reclaimed = true;
    newest.request.reclaim!();
  };

  const wait = (request: SlotRequest) =>
    queue.wait(
      { tenant: request.tenant, capacityClass: request.capacityClass, request },
      { timeoutMs: request.waitUntil === undefined ? undefined : request.waitUntil - Date.now(), signal: request.signal },
    );

  return {
    async acquire(request) {
      const mayRun = underCap(request.tenant);
      const idle = mayRun && mayTake(request.capacityClass) ? options.idle(request.capacityClass) : undefined;
      // Granted before any await, so two requests of one tenant cannot both pass the cap.
      if (idle !== undefined) return grant(request, idle);
      const waited = wait(request);
      if (mayRun && request.capacityClass === 'paid' && underShare('paid')) reclaimBorrowed();
      return waited;
    },
    close(error) {
      closed = true;
      queue.refuseAll(error);
    },
  };
}
