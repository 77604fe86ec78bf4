/**
 * Whose turn it is when capacity frees (DECISIONS §4 Fair shares), for the runner's slot limiter
 * and its worker pool alike: among the waiters that may run, the tenant holding the fewest units
 * now, then the one served longest ago, then the oldest waiter. So a caller with many queued
 * queries cannot keep a caller with one waiting: each waiting tenant gets its turn in rotation.
 * Work without a tenant counts as one tenant of its own.
 */
export interface TenantWaiter {
  readonly tenant: string | undefined;
}

export interface FairTurns {
  heldBy(tenant: string | undefined): number;
  /** One more unit held by `tenant`, which was served now. */
  take(tenant: string | undefined): void;
  give(tenant: string | undefined): void;
  /** The index in `waiting` (oldest first) whose turn it is, or -1 when none may run. */
  next<W extends TenantWaiter>(waiting: readonly W[], mayRun?: (waiter: W) => boolean): number;
}

const NO_TENANT = '';

export function createFairTurns(): FairTurns {
  const held = new Map<string, number>();
  const servedAt = new Map<string, number>();
  let clock = 0;
  const heldBy = (tenant: string | undefined) => held.get(tenant ?? NO_TENANT) ?? 0;
  const change = (tenant: string | undefined, delta: number) => {
    const key = tenant ?? NO_TENANT;
    const count = (held.get(key) ?? 0) + delta;
    if (count > 0) held.set(key, count);
    else held.delete(key);
  };
  /** True when tenant `a` goes before tenant `b`; equal tenants keep the waiters' order. */
  const before = (a: string | undefined, b: string | undefined) => {
    const [heldA, heldB] = [heldBy(a), heldBy(b)];
    if (heldA !== heldB) return heldA < heldB;
    return (servedAt.get(a ?? NO_TENANT) ?? 0) < (servedAt.get(b ?? NO_TENANT) ?? 0);
  };
  return {
    heldBy,
    take(tenant) {
      change(tenant, 1);
      servedAt.set(tenant ?? NO_TENANT, ++clock);
      // Tenants that hold nothing are forgotten once many have passed, so the map stays small.
      if (servedAt.size > 10_000) for (const key of servedAt.keys()) if (!held.has(key)) servedAt.delete(key);
    },
    give: (tenant) => change(tenant, -1),
    next(waiting, mayRun = () => true) {
      let best = -1;
      for (let i = 0; i < waiting.length; i++) {
        const tenant = waiting[i]!.tenant;
        if (!mayRun(waiting[i]!)) continue;
        if (best < 0 || before(tenant, waiting[best]!.tenant)) best = i;
      }
      return best;
    },
  };
}
