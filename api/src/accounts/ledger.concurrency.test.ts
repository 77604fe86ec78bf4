/**
 * DECISIONS §3: the balance can never go below zero, whatever the number of concurrent requests
 * across pods. Four processes fire 60 charges each (240 in all, 10 idempotency keys shared by every
 * process) at a balance that covers only 100 of them; the sum charged must equal what the balance
 * allowed, to the micro-dollar, and the ledger must agree.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import { type TestContext, openTestContext } from '@uda/test-support/api-harness';
import { runNode } from '../../test/support/spawn.ts';
import { AccountStore } from './store.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await openTestContext();
});
afterAll(async () => {
  await ctx.close();
});

describe('ledger under concurrency', () => {
  it('charges exactly what the balance allows across processes', async () => {
    const accounts = new AccountStore(ctx.db);
    const account = await accounts.create({ email: 'race@example.com', tier: 'free' });
    const amount = 30_000;
    // 2.00 grant + 1.01 top-off = 100 charges of 0.03, leaving 0.01.
    await accounts.setGrant(account.id, 2_000_000);
    await accounts.addTopoff(account.id, 1_010_000);
    const worker = join(process.cwd(), 'api/test/support/charge-worker.ts');
    const outputs = await Promise.all(
      [0, 1, 2, 3].map((w) => runNode(worker, [ctx.database.url, account.id, '60', String(amount), String(w)])),
    );
    const results = outputs.map((o) => JSON.parse(o.trim()) as { charged: number; ok: number; duplicate: number; refused: number });
    const charged = results.reduce((sum, r) => sum + r.charged, 0);
    const ok = results.reduce((sum, r) => sum + r.ok, 0);
    expect(results.reduce((sum, r) => sum + r.ok + r.duplicate + r.refused, 0)).toBe(240);
    expect(ok).toBe(100);
    expect(charged).toBe(3_000_000);
    const after = await accounts.mustGet(account.id);
    expect(after.grantMicro).toBe(0);
    expect(after.topoffMicro).toBe(10_000);
    const ledger = (await ctx.db('ledger').where({ account_id: account.id }).sum({ s: 'amount_micro' }).count({ n: '*' })) as unknown as { s: string; n: string }[];
    expect(Number(ledger[0]?.s)).toBe(3_000_000);
    expect(Number(ledger[0]?.n)).toBe(100);
  });
});
