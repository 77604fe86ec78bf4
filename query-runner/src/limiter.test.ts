import { describe, it, expect } from '@jest/globals';
import { RunnerError } from './errors.ts';
import { createLimiter } from './limiter.ts';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('limiter', () => {
  it('runs at most maxRunning at once and starts a queued task when a slot frees', async () => {
    const limiter = createLimiter(1, 1);
    const first = gate();
    const running = limiter.run(() => first.opened.then(() => 'first'));
    const queued = limiter.run(async () => 'second');
    expect([limiter.running, limiter.queued]).toEqual([1, 1]);
    first.open();
    expect(await running).toBe('first');
    expect(await queued).toBe('second');
    expect([limiter.running, limiter.queued]).toEqual([0, 0]);
  });

  it('refuses with QUERY_BACKEND_UNAVAILABLE and a retry hint when the queue is full', async () => {
    const limiter = createLimiter(1, 0);
    const first = gate();
    const running = limiter.run(() => first.opened);
    const refused = await limiter.run(async () => 'never').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RunnerError);
    expect(refused).toMatchObject({ code: 'QUERY_BACKEND_UNAVAILABLE', retryAfterSeconds: 1 });
    first.open();
    await running;
  });

  it('frees the slot when a task fails', async () => {
    const limiter = createLimiter(1, 0);
    await expect(limiter.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await limiter.run(async () => 'next')).toBe('next');
  });

  it('a waiter leaves the queue past its bound, or when its caller stops waiting', async () => {
    const limiter = createLimiter(1, 10);
    const first = gate();
    const running = limiter.run(() => first.opened);
    const late = await limiter.run(async () => 'never', { waitUntil: Date.now() + 50 }).catch((e: unknown) => e);
    expect(late).toMatchObject({ code: 'QUERY_BACKEND_UNAVAILABLE', retryAfterSeconds: 1 });
    const caller = new AbortController();
    const gone = limiter.run(async () => 'never', { signal: caller.signal }).catch((e: unknown) => e);
    expect(limiter.queued).toBe(1);
    caller.abort();
    expect(await gone).toMatchObject({ code: 'QUERY_BACKEND_UNAVAILABLE' });
    expect(limiter.queued).toBe(0);
    first.open();
    await running;
    expect([limiter.running, limiter.queued]).toEqual([0, 0]);
  });

  it('a freed slot goes to the tenant served longest ago, not to the oldest waiter', async () => {
    const limiter = createLimiter(1, 10);
    const first = gate();
    const order: string[] = [];
    const job = (name: string) => async () => void order.push(name);
    const running = limiter.run(() => first.opened, { tenant: 'a' });
    const queued = [
      limiter.run(job('a2'), { tenant: 'a' }),
      limiter.run(job('a3'), { tenant: 'a' }),
      limiter.run(job('b1'), { tenant: 'b' }),
      limiter.run(job('a4'), { tenant: 'a' }),
      limiter.run(job('c1'), { tenant: 'c' }),
    ];
    first.open();
    await Promise.all([running, ...queued]);
    expect(order).toEqual(['b1', 'c1', 'a2', 'a3', 'a4']);
  });

  it('with classes: the free class holds at most half of the slots and of the queue; the paid class any slot, and a freed slot goes to a class under its share', async () => {
    const limiter = createLimiter(4, 4, { classes: true });
    const held = gate();
    const order: string[] = [];
    const job = (name: string) => async () => void order.push(name);
    const free = [limiter.run(() => held.opened, { capacityClass: 'free' }), limiter.run(() => held.opened, { capacityClass: 'free' })];
    // Two free slots are taken: the next free query waits although two slots are idle.
    const freeQueued = [limiter.run(job('f3'), { capacityClass: 'free' }), limiter.run(job('f4'), { capacityClass: 'free' })];
    expect([limiter.running, limiter.queued]).toEqual([2, 2]);
    // The free half of the queue is full; a paid query still runs at once, in an idle slot.
    expect(await limiter.run(async () => 'never', { capacityClass: 'free' }).catch((e: unknown) => e)).toMatchObject({ code: 'QUERY_BACKEND_UNAVAILABLE' });
    const paid = [limiter.run(() => held.opened, { capacityClass: 'paid' }), limiter.run(() => held.opened, { capacityClass: 'paid' })];
    const paidQueued = limiter.run(job('p3'), { capacityClass: 'paid' });
    expect([limiter.running, limiter.queued]).toEqual([4, 3]);
    // Each class holds its share: a freed free slot goes to a free waiter, though the paid one queued later.
    held.open();
    await Promise.all([...free, ...paid, ...freeQueued, paidQueued]);
    expect(order.slice(0, 2).sort()).toEqual(['f3', 'f4']);
    expect([limiter.running, limiter.queued]).toEqual([0, 0]);
  });
});
