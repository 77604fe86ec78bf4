import { describe, expect, it } from '@jest/globals';
import { createFairScheduler } from './fair-scheduler.ts';

/** Slots are numbered; `free` holds the idle ones, taken oldest first. */
function slots(count: number) {
  const free = Array.from({ length: count }, (_, i) => i);
  const scheduler = createFairScheduler<number>({
    perTenant: Math.max(1, Math.floor(count / 2)),
    idle: () => free.shift(),
    waitedTooLong: () => new Error('waited too long'),
    stopped: () => new Error('stopped'),
  });
  /** Gives `slot` back: handed to the next waiter, or free again. */
  const release = (tenant: string | undefined, slot: number) => {
    if (!scheduler.release(tenant, () => slot)) free.push(slot);
  };
  return { scheduler, release, free };
}

/** Records the order in which waiters get their slot. */
function track<T>(order: string[], name: string, promise: Promise<T>): Promise<T> {
  return promise.then((value) => (order.push(name), value));
}

const turnsPass = () => new Promise((resolve) => setImmediate(resolve));

describe('fair scheduler', () => {
  it('gives idle slots at once, and one tenant at most half of them', async () => {
    const { scheduler, release } = slots(4);
    const a1 = await scheduler.acquire('a');
    const a2 = await scheduler.acquire('a');
    const order: string[] = [];
    const a3 = track(order, 'a3', scheduler.acquire('a'));
    // Tenant b still gets a slot at once: a is at its cap of two.
    expect(await scheduler.acquire('b')).toBe(2);
    await turnsPass();
    expect(order).toEqual([]);
    release('a', a1);
    expect(await a3).toBe(a1);
    release('a', a2);
  });

  it('hands a freed slot to the tenant holding the fewest, not to the oldest waiter', async () => {
    const { scheduler, release } = slots(2);
    const a = await scheduler.acquire('a');
    const b = await scheduler.acquire('b');
    const order: string[] = [];
    const waits = [track(order, 'a2', scheduler.acquire('a')), track(order, 'a3', scheduler.acquire('a')), track(order, 'c1', scheduler.acquire('c'))];
    release('b', b);
    // a holds one slot, c none: c goes first although it queued last.
    await turnsPass();
    expect(order).toEqual(['c1']);
    release('a', a);
    await turnsPass();
    expect(order).toEqual(['c1', 'a2']);
    // a is at its cap of one: a3 waits even with a slot free, until a gives one back.
    release('c', await waits[2]!);
    await turnsPass();
    expect(order).toEqual(['c1', 'a2']);
    release('a', await waits[0]!);
    await turnsPass();
    expect(order).toEqual(['c1', 'a2', 'a3']);
  });

  it('hands on the replacement handOff gives, for a lost slot', async () => {
    const { scheduler } = slots(1);
    await scheduler.acquire(undefined);
    const next = scheduler.acquire(undefined);
    expect(scheduler.release(undefined, () => 99)).toBe(true);
    expect(await next).toBe(99);
  });

  it('ends a wait at its waitUntil, and when its caller stops waiting, leaving the queue', async () => {
    const { scheduler, release, free } = slots(1);
    const held = await scheduler.acquire(undefined);
    await expect(scheduler.acquire(undefined, undefined, Date.now() + 20)).rejects.toThrow('waited too long');
    const controller = new AbortController();
    const aborted = scheduler.acquire(undefined, controller.signal);
    controller.abort();
    await expect(aborted).rejects.toThrow('stopped');
    // Neither left a waiter behind: the slot is free again.
    release(undefined, held);
    expect(free).toEqual([held]);
  });

  it('refuses every waiter on close and hands nothing on after it', async () => {
    const { scheduler } = slots(1);
    await scheduler.acquire('a');
    const waiting = scheduler.acquire('b');
    scheduler.close(new Error('closing'));
    await expect(waiting).rejects.toThrow('closing');
    expect(scheduler.release('a', () => 0)).toBe(false);
  });
});
