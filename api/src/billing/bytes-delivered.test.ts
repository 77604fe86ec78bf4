/**
 * The bytes rule (DECISIONS §3 "Bytes delivered count"): the span arithmetic, and the same
 * schedules against both delivery trackers (in-process, and Redis with its Lua steps).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type TestContext, openTestContext, uniquePrefix } from '@uda/test-support/api-harness';
import { PARTIAL_REFUNDS_PER_DAY, bytesToStand, coveredBytes, mergeSpans } from './bytes-delivered.ts';
import { type DeliveryTracker, MemoryDeliveryTracker } from './deliveries.ts';
import { RedisDeliveryTracker } from './deliveries-redis.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await openTestContext();
});
afterAll(() => ctx.close());

describe('span arithmetic', () => {
  it('merges overlapping and touching spans and counts each byte once', () => {
    expect(mergeSpans([{ start: 10, end: 20 }, { start: 0, end: 5 }], { start: 5, end: 12 })).toEqual([{ start: 0, end: 20 }]);
    expect(mergeSpans([{ start: 0, end: 5 }], { start: 7, end: 7 })).toEqual([{ start: 0, end: 5 }]);
    expect(coveredBytes([{ start: 0, end: 400 }, { start: 0, end: 400 }, { start: 300, end: 500 }, { start: 900, end: 1000 }])).toBe(600);
  });

  it('half the file makes a charge stand, at least one byte', () => {
    expect(bytesToStand(1000)).toBe(500);
    expect(bytesToStand(1001)).toBe(501);
    expect(bytesToStand(0)).toBe(1);
  });
});

const SIZE = 1_000;
const NOON = Date.UTC(2026, 10, 25, 12);
const DAY = 86_400_000;

const trackers: [string, () => DeliveryTracker][] = [
  ['in-process', () => new MemoryDeliveryTracker()],
  ['Redis', () => new RedisDeliveryTracker({ redis: ctx.redis, prefix: uniquePrefix() })],
];

describe.each(trackers)('the %s tracker', (_name, make) => {
  let n = 0;
  const account = () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`;
  /** One delivery under `charge` that breaks having sent `span`; true when the caller must refund. */
  const breakOne = async (tracker: DeliveryTracker, charge: string, span: [number, number] | undefined, now = NOON) => {
    const id = `d${++n}`;
    expect(await tracker.begin(charge, id, now + 60_000)).toBe(true);
    const refund = await tracker.abandon(charge, id, now, span && { span: { start: span[0], end: span[1] }, sizeBytes: SIZE });
    if (refund) await tracker.refunded(charge);
    return refund;
  };

  it('the same first 40% broken again and again counts once, and the partial refunds stop at the day\'s cap', async () => {
    const tracker = make();
    const base = `export:${account()}:exports/v1/service.db`;
    for (let i = 0; i < PARTIAL_REFUNDS_PER_DAY; i++) expect(await breakOne(tracker, `${base}#${i}`, [0, 400])).toBe(true);
    expect(await breakOne(tracker, `${base}#${PARTIAL_REFUNDS_PER_DAY}`, [0, 400])).toBe(false);
  });

  it('pieces of two deliveries that together reach half the file make the charge stand', async () => {
    const tracker = make();
    const charge = `export:${account()}:exports/v1/service.db#0`;
    expect(await tracker.begin(charge, 'a', NOON + 60_000)).toBe(true);
    expect(await tracker.begin(charge, 'b', NOON + 60_000)).toBe(true);
    expect(await tracker.abandon(charge, 'a', NOON, { span: { start: 0, end: 300 }, sizeBytes: SIZE })).toBe(false);
    expect(await tracker.abandon(charge, 'b', NOON, { span: { start: 200, end: 500 }, sizeBytes: SIZE })).toBe(false);
    // It stands: a later delivery under it is accepted, and its break refunds nothing.
    expect(await breakOne(tracker, charge, undefined)).toBe(false);
  });

  it('a break before the first byte is refunded past the cap; the cap is per UTC day', async () => {
    const tracker = make();
    const acct = account();
    const file = (i: number) => `export:${acct}:exports/v1/tables/t${i}.csv#0`;
    for (let i = 0; i < PARTIAL_REFUNDS_PER_DAY; i++) expect(await breakOne(tracker, file(i), [0, 100])).toBe(true);
    expect(await breakOne(tracker, file(10), undefined)).toBe(true);
    expect(await breakOne(tracker, file(11), [0, 100])).toBe(false);
    expect(await breakOne(tracker, file(12), [0, 100], NOON + DAY)).toBe(true);
  });

  it('a standing charge forgets the file\'s broken bytes: the next window starts afresh', async () => {
    const tracker = make();
    const base = `export:${account()}:exports/v1/service.db`;
    expect(await breakOne(tracker, `${base}#0`, [0, 400])).toBe(true);
    expect(await tracker.begin(`${base}#1`, 'whole', NOON + 60_000)).toBe(true);
    await tracker.complete(`${base}#1`, 'whole');
    // 24 h later the window's next charge: 200 bytes alone are under half the file.
    expect(await breakOne(tracker, `${base}#2`, [0, 200], NOON + DAY)).toBe(true);
  });

  it('a charge whose other delivery died with its pod is a partial refund when reaped: refunded under the cap, standing past it', async () => {
    const tracker = make();
    const acct = account();
    const halfDead = async (charge: string, at: number) => {
      expect(await tracker.begin(charge, `${charge}/dies`, at + 1_000)).toBe(true);
      expect(await tracker.begin(charge, `${charge}/breaks`, at + 60_000)).toBe(true);
      expect(await tracker.abandon(charge, `${charge}/breaks`, at, { span: { start: 0, end: 100 }, sizeBytes: SIZE })).toBe(false);
      // Past every expiry the charge ever had (the reaper's index keeps the latest one).
      return tracker.reap(at + 61_000);
    };
    expect(await halfDead(`export:${acct}:first#0`, NOON)).toContain(`export:${acct}:first#0`);
    await tracker.refunded(`export:${acct}:first#0`);
    for (let i = 1; i < PARTIAL_REFUNDS_PER_DAY; i++) expect(await breakOne(tracker, `export:${acct}:f${i}#0`, [0, 100], NOON + 70_000)).toBe(true);
    // The cap is spent: the dead delivery's charge stands instead of being refunded.
    expect(await halfDead(`export:${acct}:dead#0`, NOON + 80_000)).not.toContain(`export:${acct}:dead#0`);
    expect(await breakOne(tracker, `export:${acct}:dead#0`, undefined, NOON + 150_000)).toBe(false);
  });
});
