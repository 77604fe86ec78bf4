/**
 * Capacity classes of user SQL (DECISIONS §4 Capacity classes): Free accounts (and any request that
 * names no class) hold at most half of the slots; Developer and Pro accounts hold the rest. Each
 * runner splits its own slots so, which splits the slots of all runners alike: the free class never
 * holds more than half of them, however many runners there are. A class may borrow the other's idle
 * slots, and a freed slot goes first to a class under its share; in the worker pool the free class
 * leaves one paid worker idle, and a slot it borrowed is taken back as soon as the paid class needs
 * it (`workers/fair-scheduler.ts`).
 */
import type { CapacityClass } from '@uda/shared/runner-contract';

export type { CapacityClass };

export type ClassShares = Readonly<Record<CapacityClass, number>>;

/** The free class gets half of `slots`, rounded down; the paid class the rest (so all of one slot). */
export function classShares(slots: number): ClassShares {
  const free = Math.floor(slots / 2);
  return { free, paid: slots - free };
}

/**
 * A request without a class (the runner's own tools, an API from before the classes) is not held to
 * the free share: the API always names the class of an account's query.
 */
export function classOf(capacityClass: CapacityClass | undefined): CapacityClass {
  return capacityClass ?? 'paid';
}

export interface ClassWaiter {
  readonly tenant: string | undefined;
  readonly capacityClass: CapacityClass;
}

/**
 * The waiter a freed slot goes to: first among those whose class is under its share, then among
 * all (borrowing); within either, `fairNext` picks (the fair turn among tenants). -1: none may run.
 */
export function nextByClass<W extends ClassWaiter>(
  waiting: readonly W[],
  underShare: (capacityClass: CapacityClass) => boolean,
  fairNext: (waiting: readonly W[], mayRun: (waiter: W) => boolean) => number,
  mayRun: (waiter: W) => boolean = () => true,
): number {
  const owed = fairNext(waiting, (waiter) => mayRun(waiter) && underShare(waiter.capacityClass));
  return owed >= 0 ? owed : fairNext(waiting, mayRun);
}
