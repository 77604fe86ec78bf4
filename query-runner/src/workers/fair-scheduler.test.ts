import { describe, expect, it } from '@jest/globals';
import { classShares, type CapacityClass } from '../capacity-classes.ts';
import { createFairScheduler, type Grant, type SlotRequest } from './fair-scheduler.ts';

/** Slots are numbered; `free` holds the idle ones, taken oldest first. */
function slots(count: number) {
  const free = Array.from({ length: count }, (_, i) => i);
  const scheduler = createFairScheduler<number>({
    perTenant: Math.max(1, Math.floor(count / 2)),
    shares: classShares(count),
    idle: () => free.shift(),
    waitedTooLong: () => new Error('waited too long'),
    stopped: () => new Error('stopped'),
  });
  /** Gives the slot back: handed to the next waiter, or free again. */
  const release = (grant: Grant<number>) => {
    if (!grant.release(() => grant.slot)) free.push(grant.slot);
  };
  const acquire = (tenant: string | undefined, more: Partial<SlotRequest> = {}) => scheduler.acquire({ tenant, capacityClass: 'paid', ...more });
  return { scheduler, acquire, release, free };
}

/** Records the order in which waiters get their slot. */
function track<T>(order: string[], name: string, promise: Promise<T>): Promise<T> {
  return promise.then((value) => (order.push(name), value));
}

const turnsPass = () => new Promise((resolve) => setImmediate(resolve));

describe('fair scheduler', () => {
  it('gives idle slots at once, and one tenant at most half of them', async () => {
    const { acquire, release } = slots(4);
    const a1 = await acquire('a');
    const a2 = await acquire('a');
    const order: string[] = [];
    const a3 = track(order, 'a3', acquire('a'));
    // Tenant b still gets a slot at once: a is at its cap of two.
    expect((await acquire('b')).slot).toBe(2);
    await turnsPass();
    expect(order).toEqual([]);
    release(a1);
    expect((await a3).slot).toBe(a1.slot);
    release(a2);
  });

  it('hands a freed slot to the tenant holding the fewest, not to the oldest waiter', async () => {
    const { acquire, release } = slots(2);
    const a = await acquire('a');
    const b = await acquire('b');
    const order: string[] = [];
    const waits = [track(order, 'a2', acquire('a')), track(order, 'a3', acquire('a')), track(order, 'c1', acquire('c'))];
    release(b);
    // a holds one slot, c none: c goes first although it queued last.
    await turnsPass();
    expect(order).toEqual(['c1']);
    release(a);
    await turnsPass();
    expect(order).toEqual(['c1', 'a2']);
    // a is at its cap of one: a3 waits even with a slot free, until a gives one back.
    release(await waits[2]!);
    await turnsPass();
    expect(order).toEqual(['c1', 'a2']);
    release(await waits[0]!);
    await turnsPass();
    expect(order).toEqual(['c1', 'a2', 'a3']);
  });

  it('hands on the replacement handOff gives, for a lost slot', async () => {
    const { acquire } = slots(1);
    const held = await acquire(undefined);
    const next = acquire(undefined);
    expect(held.release(() => 99)).toBe(true);
    expect((await next).slot).toBe(99);
  });

  it('ends a wait at its waitUntil, and when its caller stops waiting, leaving the queue', async () => {
    const { acquire, release, free } = slots(1);
    const held = await acquire(undefined);
    await expect(acquire(undefined, { waitUntil: Date.now() + 20 })).rejects.toThrow('waited too long');
    const controller = new AbortController();
    const aborted = acquire(undefined, { signal: controller.signal });
    controller.abort();
    await expect(aborted).rejects.toThrow('stopped');
    // Neither left a waiter behind: the slot is free again.
    release(held);
    expect(free).toEqual([held.slot]);
  });

  it('refuses every waiter on close and hands nothing on after it', async () => {
    const { acquire, scheduler } = slots(1);
    const held = await acquire('a');
    const waiting = acquire('b');
    scheduler.close(new Error('closing'));
    await expect(waiting).rejects.toThrow('closing');
    expect(held.release(() => 0)).toBe(false);
  });
});

describe('capacity classes in the fair scheduler', () => {
  /** A request of `capacityClass` whose reclaim is recorded under `name`. */
  const classed = (capacityClass: CapacityClass, reclaimed: string[], name: string): Partial<SlotRequest> => ({ capacityClass, reclaim: () => reclaimed.push(name) });

  it('lets the free class borrow idle paid slots but the last, and takes back the newest borrowed one when a paid request finds none idle', async () => {
    const { acquire, release } = slots(4);
    const reclaimed: string[] = [];
    // Three free tenants take three slots: two are the free share, one is borrowed; the fourth free one waits.
    const free = await Promise.all(['f1', 'f2', 'f3'].map((name) => acquire(name, classed('free', reclaimed, name))));
    const order: string[] = [];
    const f4 = track(order, 'f4', acquire('f4', classed('free', reclaimed, 'f4')));
    await turnsPass();
    expect(order).toEqual([]);
    // The paid slot left idle: a paid request takes it at once, nothing is stopped.
    const p1 = await acquire('p1', { capacityClass: 'paid' });
    expect(reclaimed).toEqual([]);
    // None idle now: the next paid request takes back the borrowed slot, the newest free holder's.
    const p2 = acquire('p2', { capacityClass: 'paid' });
    expect(reclaimed).toEqual(['f3']);
    release(free[2]!);
    expect((await p2).slot).toBe(free[2]!.slot);
    // The paid class holds its share: a third paid request waits, and stops nothing.
    const p3 = track(order, 'p3', acquire('p3', { capacityClass: 'paid' }));
    expect(reclaimed).toEqual(['f3']);
    // A slot each class frees goes to its own waiter, the class under its share.
    release(free[0]!);
    await turnsPass();
    expect(order).toEqual(['f4']);
    release(p1);
    await Promise.all([f4, p3]);
    expect(order).toEqual(['f4', 'p3']);
  });

  it('never stops a paid holder for a free request: the free request waits for a freed slot', async () => {
    const { acquire, release } = slots(2);
    const reclaimed: string[] = [];
    const p1 = await acquire('p1', classed('paid', reclaimed, 'p1'));
    const p2 = await acquire('p2', classed('paid', reclaimed, 'p2'));
    const order: string[] = [];
    const f1 = track(order, 'f1', acquire('f1', classed('free', reclaimed, 'f1')));
    const p3 = track(order, 'p3', acquire('p3', { capacityClass: 'paid' }));
    expect(reclaimed).toEqual([]);
    // The paid class holds more than its share: a freed slot goes to the free class, under its share, first.
    release(p1);
    await turnsPass();
    expect(order).toEqual(['f1']);
    release(p2);
    await turnsPass();
    expect(order).toEqual(['f1', 'p3']);
    await Promise.all([f1, p3]);
  });
});
