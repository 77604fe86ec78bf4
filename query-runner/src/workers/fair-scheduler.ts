/**
 * Who gets the next slot (a query worker) and when (DECISIONS §4 Fair shares), apart from what a
 * slot is. One tenant holds at most `perTenant` slots at once, so even many runaways from one
 * caller leave slots for everyone else; its other requests wait their turn. A freed slot goes to
 * the waiter `fair-turns.ts` picks (the tenant holding the fewest, then the one served longest ago,
 * then the oldest). A wait ends at its `waitUntil` or when its caller stops waiting (`signal`).
 */
import { createFairTurns } from '../fair-turns.ts';

export interface FairSchedulerOptions<T> {
  /** Slots one tenant may hold at once; requests without a tenant are not capped. */
  readonly perTenant: number;
  /** A free slot to take at once (marked taken by the callee), or undefined when every slot is held. */
  readonly idle: () => T | undefined;
  /** The error of a wait that passed its `waitUntil`. */
  readonly waitedTooLong: () => unknown;
  /** The error of a wait whose caller stopped waiting. */
  readonly stopped: (signal: AbortSignal | undefined) => unknown;
}

export interface FairScheduler<T> {
  /** A slot for `tenant`: at once when one is idle and the tenant is under its cap, else in its turn. */
  acquire(tenant: string | undefined, signal?: AbortSignal, waitUntil?: number): Promise<T>;
  /**
   * `tenant` gave its slot back. When a waiter may run now, it gets `handOff()` (the same slot, or a
   * replacement for a lost one) and this returns true; false: the slot is free.
   */
  release(tenant: string | undefined, handOff: () => T): boolean;
  /** Refuses every waiting request with `error`; no slot is handed on after this. */
  close(error: unknown): void;
}

interface Waiter<T> {
  readonly tenant: string | undefined;
  resolve(slot: T): void;
  reject(error: unknown): void;
}

export function createFairScheduler<T>(options: FairSchedulerOptions<T>): FairScheduler<T> {
  const waiting: Waiter<T>[] = [];
  const turns = createFairTurns();
  const underCap = (tenant: string | undefined) => tenant === undefined || turns.heldBy(tenant) < options.perTenant;
  let closed = false;

  const wait = (tenant: string | undefined, signal: AbortSignal | undefined, waitUntil: number | undefined) =>
    new Promise<T>((resolve, reject) => {
      const waiter: Waiter<T> = { tenant, resolve, reject };
      const leave = (error: unknown) => {
        const index = waiting.indexOf(waiter);
        if (index < 0) return;
        waiting.splice(index, 1);
        reject(error);
      };
      const timer = waitUntil === undefined ? undefined : setTimeout(() => leave(options.waitedTooLong()), Math.max(0, waitUntil - Date.now()));
      const onAbort = () => leave(options.stopped(signal));
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      waiter.resolve = (slot) => (done(), resolve(slot));
      waiter.reject = (error) => (done(), reject(error));
      waiting.push(waiter);
    });

  return {
    async acquire(tenant, signal, waitUntil) {
      const idle = underCap(tenant) ? options.idle() : undefined;
      // Counted before any await, so two requests of one tenant cannot both pass the cap.
      if (idle === undefined) return wait(tenant, signal, waitUntil);
      turns.take(tenant);
      return idle;
    },
    release(tenant, handOff) {
      turns.give(tenant);
      const index = closed ? -1 : turns.next(waiting, underCap);
      if (index < 0) return false;
      const [next] = waiting.splice(index, 1);
      const slot = handOff();
      turns.take(next!.tenant);
      next!.resolve(slot);
      return true;
    },
    close(error) {
      closed = true;
      for (const waiter of waiting.splice(0)) waiter.reject(error);
    },
  };
}
