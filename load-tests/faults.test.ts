/**
 * How the load test judges the answers around a fault (`faults.ts`) and the money per account
 * (`reconcile.ts`), on answers given to it directly: the window runs from the injection until every
 * route has answered as expected after the restore; inside it a 503 with Retry-After is allowed and
 * anything else unexpected is counted; outside it only the usual answers are. The injection acts on
 * a Redis whose flush is recorded, nothing else.
 */
import type { OwnRedis } from '@uda/test-support/own-servers';
import { type FaultTargets, newFaultTracker, type Observed, refundsAfterRedisLoss } from './faults.ts';
import { ledgerEqualsReceived, holds } from './reconcile.ts';

const ok = (route: string, sentS: number, answeredS = sentS + 0.1): Observed => ({ route, label: '200', expected: true, retryLater: false, sentS, answeredS, api: 0, costMicro: 0 });
const busy = (route: string, sentS: number): Observed => ({ route, label: '503 SERVICE_UNAVAILABLE', expected: false, retryLater: true, sentS, answeredS: sentS + 0.1, api: 1, costMicro: 0 });
const failed = (route: string, sentS: number): Observed => ({ route, label: '500', expected: false, retryLater: false, sentS, answeredS: sentS + 0.1, api: 1, costMicro: 0 });

async function flushedAt(clock: { now: number }): Promise<ReturnType<typeof newFaultTracker>> {
  const tracker = newFaultTracker();
  let flushes = 0;
  const targets: FaultTargets = { redis: { flush: async () => void flushes++ } as OwnRedis, signal: async () => undefined, restart: async () => undefined };
  await tracker.run(targets, ['redis-flush'], { firstAtS: 0, gapS: 0, downS: 0, nowS: () => clock.now, progress: () => undefined });
  expect(flushes).toBe(1);
  return tracker;
}

describe('the fault window', () => {
  it('allows a 503 with Retry-After inside the window, counts a 500 there, and measures when every route answered again', async () => {
    const clock = { now: 10 };
    const tracker = await flushedAt(clock);
    tracker.observe(ok('lookup', 5));
    tracker.observe(busy('lookup', 10.2));
    tracker.observe(failed('sql', 10.3));
    tracker.observe(ok('lookup', 10.5));
    tracker.observe(ok('sql', 11, 12));

    const report = tracker.report(20, ['lookup', 'sql']);

    const [flush] = report.faults;
    expect(flush!.recoverS).toBe(2);
    expect(Object.fromEntries(flush!.retryLater)).toEqual({ 'lookup: 503 SERVICE_UNAVAILABLE': 1 });
    expect(Object.fromEntries(flush!.unexpected)).toEqual({ 'sql: 500': 1 });
    expect(report.unexpectedOutside.size).toBe(0);
  });

  it('counts an answer after every route answered again as unexpected outside the window, 503 with Retry-After included', async () => {
    const clock = { now: 10 };
    const tracker = await flushedAt(clock);
    tracker.observe(ok('lookup', 10.1));
    tracker.observe(busy('lookup', 15));
    tracker.observe(failed('lookup', 2));

    const report = tracker.report(20, ['lookup']);

    expect(Object.fromEntries(report.unexpectedOutside)).toEqual({ 'lookup: 503 SERVICE_UNAVAILABLE': 1, 'lookup: 500': 1 });
  });

  it('never closes the window of a route that never answered again', async () => {
    const tracker = await flushedAt({ now: 10 });
    tracker.observe(ok('lookup', 11));
    tracker.observe(failed('sql', 19));

    const [flush] = tracker.report(20, ['lookup', 'sql']).faults;

    expect(flush!.recoverS).toBeUndefined();
    expect(Object.fromEntries(flush!.unexpected)).toEqual({ 'sql: 500': 1 });
  });
});

describe('the money per account', () => {
  it('is equal, forgiven within what an api-kill may forgive, or different', () => {
    const received = new Map([['a', 100], ['b', 100], ['c', 100], ['d', 100]]);
    const ledger = new Map([['a', 100], ['b', 90], ['c', 80], ['d', 110]]);
    const forgivable = new Map([['b', 10], ['c', 10], ['d', 10]]);

    const invariant = ledgerEqualsReceived(ledger, received, forgivable);

    expect(invariant.checked!.forgiven).toEqual(['b: $0.000010 forgiven']);
    expect(invariant.checked!.accountsOff).toEqual(['c $0.000080≠$0.000100', 'd $0.000110≠$0.000100']);
    expect(holds(invariant)).toBe(false);
    expect(holds(ledgerEqualsReceived(new Map([['a', 5]]), new Map([['a', 5]]), new Map()))).toBe(true);
  });
});

describe('a refund after a loss of Redis', () => {
  const refund = (accountId: string, chargedAtMs: number, refundedAtMs: number) => ({ accountId, micro: 100_000, chargedAtMs, refundedAtMs });

  it('is excused only for a charge made before the loss and refunded after it', () => {
    const refunds = [refund('before-after', 1_000, 5_000), refund('both-before', 1_000, 1_500), refund('both-after', 3_000, 5_000), refund('in-its-flush', 2_400, 2_600)];

    expect(Object.fromEntries(refundsAfterRedisLoss(refunds, [2_000]))).toEqual({ 'before-after': 100_000, 'in-its-flush': 100_000 });
    expect(refundsAfterRedisLoss(refunds, [])).toEqual(new Map());
  });
});
