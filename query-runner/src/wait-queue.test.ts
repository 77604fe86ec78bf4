import { describe, expect, it } from '@jest/globals';
import { createWaitQueue } from './wait-queue.ts';

const options = () => {
  const left: string[] = [];
  return {
    left,
    timedOut: () => new Error('waited too long'),
    stopped: (signal: AbortSignal) => new Error(`stopped: ${String(signal.reason)}`),
    onLeave: () => left.push('left'),
  };
};

describe('wait queue', () => {
  it('hands the oldest waiter the value when no pick is given, and the picked one otherwise', async () => {
    const queue = createWaitQueue<string, string>(options());
    const first = queue.wait('first');
    const second = queue.wait('second');
    const third = queue.wait('third');
    expect(queue.serve((waiter) => `slot for ${waiter}`)).toBe('first');
    expect(queue.serve((waiter) => `slot for ${waiter}`, (waiting) => waiting.indexOf('third'))).toBe('third');
    expect(await first).toBe('slot for first');
    expect(await third).toBe('slot for third');
    expect(queue.waiting).toEqual(['second']);
    queue.serve(() => 'last');
    expect(await second).toBe('last');
  });

  it('hands nothing when none waits or the pick finds none that may run', async () => {
    const queue = createWaitQueue<string, number>(options());
    expect(queue.serve(() => 1)).toBeUndefined();
    const waited = queue.wait('waiter');
    expect(queue.serve(() => 1, () => -1)).toBeUndefined();
    expect(queue.waiting).toEqual(['waiter']);
    queue.refuseAll(new Error('closed'));
    await expect(waited).rejects.toThrow('closed');
  });

  it('settles a waiter with the timeout error once its deadline passes, while nothing is served', async () => {
    const settings = options();
    const queue = createWaitQueue<string, number>(settings);
    const waited = queue.wait('late', { timeoutMs: 5 });
    const patient = queue.wait('patient');
    await expect(waited).rejects.toThrow('waited too long');
    expect(queue.waiting).toEqual(['patient']);
    expect(settings.left).toEqual(['left']);
    queue.serve(() => 7);
    expect(await patient).toBe(7);
  });

  it('settles a waiter whose caller stops waiting, and refuses one that had already stopped', async () => {
    const settings = options();
    const queue = createWaitQueue<string, number>(settings);
    const caller = new AbortController();
    const waited = queue.wait('gone', { signal: caller.signal, timeoutMs: 60_000 });
    caller.abort('hung up');
    await expect(waited).rejects.toThrow('stopped: hung up');
    expect(queue.waiting).toEqual([]);
    await expect(queue.wait('already gone', { signal: caller.signal })).rejects.toThrow('stopped: hung up');
    expect(queue.waiting).toEqual([]);
    expect(settings.left).toEqual(['left']);
  });

  it('a served waiter is not refused later by its deadline or its signal', async () => {
    const settings = options();
    const queue = createWaitQueue<string, number>(settings);
    const caller = new AbortController();
    const waited = queue.wait('served', { signal: caller.signal, timeoutMs: 1 });
    queue.serve(() => 3);
    caller.abort();
    expect(await waited).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(settings.left).toEqual([]);
  });

  it('refuses every waiter on refuseAll', async () => {
    const queue = createWaitQueue<string, number>(options());
    const waits = [queue.wait('a'), queue.wait('b', { timeoutMs: 60_000 })];
    queue.refuseAll(new Error('closing'));
    for (const waited of waits) await expect(waited).rejects.toThrow('closing');
    expect(queue.waiting).toEqual([]);
  });
});
