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
});
