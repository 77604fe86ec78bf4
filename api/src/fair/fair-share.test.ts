/**
 * The fair-share gate by outcome, on the in-process store (the Redis one is the same interface,
 * `store.test.ts`; the routes run it on Redis in `query.fair-share.test.ts`).
 */
import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../errors/api-error.ts';
import { RunnerError } from '@uda/shared/runner-contract';
import { FairShare } from './fair-share.ts';
import { DEFAULT_FAIR_SHARE } from './rules.ts';
import { MemoryFairStore } from './store.ts';

const caller = { accountId: 'acct-1', tier: 'free' as const };

function gate(overrides: Partial<typeof DEFAULT_FAIR_SHARE> = {}) {
  return new FairShare({ store: new MemoryFairStore(), limits: { ...DEFAULT_FAIR_SHARE, waitMs: 300, ...overrides }, callTimeoutMs: 60_000 });
}

function opened() {
  let open!: () => void;
  const gateOpen = new Promise<void>((resolve) => (open = resolve));
  return { gateOpen, open };
}

describe('fair share gate', () => {
  it('lets a caller run its tier\'s share at once; one more waits its bounded time, then 429 QUERY_CONCURRENCY_LIMITED with Retry-After', async () => {
    const fair = gate();
    const held = opened();
    const running = [fair.run(caller, () => held.gateOpen), fair.run(caller, () => held.gateOpen)];
    const refused = await fair.run(caller, async () => 'never').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ code: 'QUERY_CONCURRENCY_LIMITED', status: 429, headers: { 'Retry-After': expect.stringMatching(/^\d+$/) } });
    expect((refused as ApiError).message).toContain('2 queries at once, the most the free tier allows');
    // Another account is not affected.
    expect(await fair.run({ accountId: 'acct-2', tier: 'free' }, async () => 'ran')).toBe('ran');
    held.open();
    await Promise.all(running);
  });

  it('a waiting query runs as soon as one of the caller\'s queries ends within the wait', async () => {
    const fair = gate({ waitMs: 10_000 });
    const held = opened();
    const running = [fair.run(caller, () => held.gateOpen), fair.run(caller, () => held.gateOpen)];
    const waiting = fair.run(caller, async () => 'third');
    held.open();
    expect(await waiting).toBe('third');
    await Promise.all(running);
  });

  it('gives the share back when the work fails', async () => {
    const fair = gate();
    for (let i = 0; i < 3; i++) await expect(fair.run(caller, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await fair.run(caller, async () => 'ran')).toBe('ran');
  });

  it('spends the worker time of runs that timed out or were abandoned; past the budget, 429 RUNNER_BUDGET_EXCEEDED until the window ends', async () => {
    // A long window, so the test never straddles two of them.
    const fair = gate({ budgetSeconds: { free: 5, developer: 600, pro: 1800 }, budgetWindowS: 1_000_000 });
    const timedOut = () => Promise.reject(new RunnerError('QUERY_TIMEOUT', 'too slow', undefined, 3_000));
    const invalid = () => Promise.reject(new RunnerError('QUERY_INVALID', 'bad column'));
    await expect(fair.run(caller, timedOut)).rejects.toMatchObject({ code: 'QUERY_TIMEOUT' });
    // Failures that took no runner time cost nothing.
    for (let i = 0; i < 5; i++) await expect(fair.run(caller, invalid)).rejects.toMatchObject({ code: 'QUERY_INVALID' });
    await expect(fair.run(caller, timedOut)).rejects.toMatchObject({ code: 'QUERY_TIMEOUT' });
    const refused = await fair.run(caller, async () => 'never').catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'RUNNER_BUDGET_EXCEEDED', status: 429 });
    const retryAfter = Number((refused as ApiError).headers['Retry-After']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(1_000_000);
    expect((refused as ApiError).message).toMatch(/timed out or hit the memory cap .* 5 runner-seconds .*free tier.* until \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    // Another account's budget is its own.
    expect(await fair.run({ accountId: 'acct-2', tier: 'free' }, async () => 'ran')).toBe('ran');
  });
});
