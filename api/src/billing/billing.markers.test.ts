/**
 * The re-read marker (DECISIONS §3 "re-read marker"), on real Redis and PostgreSQL: the spend of a
 * SQL window's charge sets it, a refund removes it before the refund is written, so a re-read
 * after a refund is charged again (the marker never stands for a refunded charge).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { TEST_REDIS_URL, type TestContext, openTestContext } from '@uda/test-support/api-harness';
import { sqlWindow } from './charge-keys.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await openTestContext();
});
afterAll(() => ctx.close());

const COST = 15_000;

describe('the re-read marker', () => {
  it('is set by the charge, removed by its refund; the re-read after the refund charges again', async () => {
    const api = await ctx.start();
    try {
      const { accountId } = await api.account({ usd: '5' });
      const payer = { accountId, tier: 'free' as const };
      const { billing } = api.services;
      const window = sqlWindow(accountId, 'q-marker', '2026-01-01T00:00:00.000Z');
      const options = { costMicro: COST, carriesBytes: true, queryId: 'q-marker' };
      expect(await billing.paidSqlResult(payer, 'q-marker')).toBeUndefined();

      const made = await billing.deliverWindow(payer, window, { ...options, madeResult: true });
      expect(made.settlement.chargedMicro).toBe(COST);
      expect(await billing.paidSqlResult(payer, 'q-marker')).toBe(`${window.base}#0`);
      // The only response under the charge broke before it completed: refunded (rule 2).
      expect((await made.abandon()).chargedMicro).toBe(0);
      expect(await billing.paidSqlResult(payer, 'q-marker')).toBeUndefined();

      const again = await billing.deliverWindow(payer, window, options);
      expect(again.settlement.chargedMicro).toBe(COST);
      expect(again.chargeKey).toBe(`${window.base}#1`);
      expect(await billing.paidSqlResult(payer, 'q-marker')).toBe(`${window.base}#1`);
      await again.complete();
      const reread = await billing.deliverWindow(payer, window, options);
      expect([reread.settlement.chargedMicro, reread.chargeKey]).toEqual([0, `${window.base}#1`]);
      await reread.complete();
    } finally {
      await api.close();
    }
  });

  it('a paid re-read\'s first call begins its delivery on the marked charge: a response of that window goes out under it, any other ends it deciding nothing', async () => {
    const api = await ctx.start();
    const redis = new Redis(TEST_REDIS_URL);
    try {
      const { accountId } = await api.account({ usd: '5' });
      const payer = { accountId, tier: 'free' as const };
      const { billing, limiterBackend, config } = api.services;
      const window = sqlWindow(accountId, 'q-begun', '2026-01-01T00:00:00.000Z');
      const options = { costMicro: COST, carriesBytes: true, queryId: 'q-begun' };
      const made = await billing.deliverWindow(payer, window, { ...options, madeResult: true });
      await made.complete();
      const inFlight = () => redis.zcard(`${config.REDIS_KEY_PREFIX}dlv:${made.chargeKey}`);
      const firstCall = async () => {
        const paid = billing.paidSqlRead(payer, 'q-begun');
        const read = paid.read((await limiterBackend.takeWith([], paid.rider!)).reply);
        expect(read?.paidKey).toBe(made.chargeKey);
        expect(await inFlight()).toBe(1);
        return read!;
      };

      const read = await firstCall();
      const reread = await billing.deliverWindow(payer, window, { ...options, paidKey: read.paidKey!, begun: read.begun! });
      expect([reread.chargeKey, reread.settlement.chargedMicro]).toEqual([made.chargeKey, 0]);
      expect(reread.settlement.balanceMicro).toBe(5_000_000 - COST);
      await reread.complete();
      expect(await inFlight()).toBe(0);

      // The stored result was gone: the run made another (a newer window), whose response ends the begun delivery.
      const other = await firstCall();
      const newer = sqlWindow(accountId, 'q-begun', '2026-01-01T00:05:00.000Z');
      const run = await billing.deliverWindow(payer, newer, { ...options, madeResult: true, paidKey: other.paidKey!, begun: other.begun! });
      expect(run.settlement.chargedMicro).toBe(COST);
      await run.complete();
      await billing.flush();
      expect(await inFlight()).toBe(0);
    } finally {
      redis.disconnect();
      await api.close();
    }
  });
});
