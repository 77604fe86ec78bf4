/**
 * The usage log's outbox over real PostgreSQL and S3 (`usage-outbox.ts`, `usage-log.ts`): a flush
 * writes its records once, even when it is retried after its first attempt committed; and a store
 * that dies between claiming rows and deleting them (before its put, or after it) leaves each
 * record in the bucket exactly once once another store takes its stale claim over.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type TestContext, openTestContext } from '@uda/test-support/api-harness';
import { type TestBucket, createTestBucket, storeOn } from '@uda/test-support/s3';
import type { ObjectStore } from '@uda/shared/object-store';
import { readUsageLog } from '../../test/support/usage-log.ts';
import { AccountStore } from '../accounts/store.ts';
import { Billing } from './billing.ts';
import { MemoryDeliveryTracker } from './deliveries.ts';
import { LeaseBook } from './leases.ts';
import { Ledger } from './ledger.ts';
import { UsageLog } from './usage-log.ts';
import { type UsageRecord, usageRecord } from './usage-outbox.ts';
import { MemoryWallet } from './wallet-memory.ts';

let ctx: TestContext;
let bucket: TestBucket;
beforeAll(async () => {
  ctx = await openTestContext();
  bucket = await createTestBucket('usage');
});
afterAll(async () => {
  await bucket.remove();
  await ctx.close();
});

const COST = 5_000;

async function outboxRecords(accountId: string): Promise<UsageRecord[]> {
  const rows = (await ctx.db('usage_outbox').orderBy('id').select('records')) as { records: UsageRecord[] }[];
  return rows.flatMap((row) => row.records).filter((r) => r.account_id === accountId);
}

/** A pod's billing whose journal flushes write the usage outbox (its own store is the test bucket). */
function billingWithUsageLog(): { accounts: AccountStore; billing: Billing } {
  const accounts = new AccountStore(ctx.db);
  const billing = new Billing({
    ledger: new Ledger(ctx.db, accounts),
    leases: new LeaseBook(ctx.db),
    wallet: new MemoryWallet(),
    deliveries: new MemoryDeliveryTracker(),
    usage: new UsageLog({ store: bucket.store, db: ctx.db, retentionDays: 35 }),
  });
  return { accounts, billing };
}

describe('a journal flush', () => {
  it('writes the records of the rows it inserted and its extras once, however often it is retried', async () => {
    const accounts = new AccountStore(ctx.db);
    const leases = new LeaseBook(ctx.db);
    const account = await accounts.create({ email: 'retry@example.com', tier: 'developer' });
    const taken = await leases.take(account.id, () => 100_000, 1);
    if (!taken.ok) throw new Error('no lease');
    const key = `lookups:${account.id}:${taken.leaseId}:retry:0`;
    const row = { idempotency_key: key, account_id: account.id, lease_id: taken.leaseId, amount_micro: 2 * COST, requests: 2, breakdown: [], request_id: null, query_id: null, flush_seq: 0 };
    const entry = (n: number) => ({ key: `lookup:${account.id}:${n}`, accountId: account.id, leaseId: taken.leaseId, amountMicro: COST, window: false, at: Date.now() });
    const records = [1, 2].map((n) => usageRecord({ entry: entry(n), ledgerKey: key, late: false, forgiven: false }));
    const extras = [usageRecord({ entry: entry(3), ledgerKey: entry(3).key, late: true, forgiven: false })];
    const outbox = { pod: 'retry', flushKey: 'retry:0', records, extras };

    // The first attempt committed (its answer was lost); the journal sends the same batch again.
    await leases.writeJournal([row], outbox);
    await leases.writeJournal([row], outbox);
    // The same flush sent again under another outbox key adds nothing and writes no record.
    await leases.writeJournal([row], { ...outbox, flushKey: 'retry:1', extras: [] });

    expect(await ctx.db('ledger').where({ idempotency_key: key }).select('amount_micro', 'requests')).toEqual([{ amount_micro: String(2 * COST), requests: 2 }]);
    expect((await outboxRecords(account.id)).map((r) => r.charge_key).sort()).toEqual([1, 2, 3].map((n) => entry(n).key));
  });

  it("adds each later flush of a lease's lookups to its one row, and charges a flush that comes after the settlement on the buckets", async () => {
    const accounts = new AccountStore(ctx.db);
    const leases = new LeaseBook(ctx.db);
    const account = await accounts.create({ email: 'grows@example.com', tier: 'developer' });
    const taken = await leases.take(account.id, () => 100_000, 1);
    if (!taken.ok) throw new Error('no lease');
    const key = `lookups:${account.id}:${taken.leaseId}:pod:2026-12-07`;
    const flush = (seq: number, requests: number) => ({ idempotency_key: key, account_id: account.id, lease_id: taken.leaseId, amount_micro: requests * COST, requests, breakdown: [], request_id: null, query_id: null, flush_seq: seq });
    const row = async () => ctx.db('ledger').where({ idempotency_key: key }).select('amount_micro', 'requests');

    expect(await leases.writeJournal([flush(0, 2)])).toEqual(new Map());
    expect(await leases.writeJournal([flush(1, 3)])).toEqual(new Map());
    // Flush 1's answer was lost: its retry is taken as written, and adds nothing.
    expect(await leases.writeJournal([flush(1, 3)])).toEqual(new Map([[key, 'taken']]));
    expect(await row()).toEqual([{ amount_micro: String(5 * COST), requests: 5 }]);

    // The lease settled (another pod) before flush 2 arrived: flush 2 is late, though its row exists.
    await leases.settle(taken.leaseId);
    expect(await leases.writeJournal([flush(2, 1)])).toEqual(new Map([[key, 'late']]));
    // ... while the retry of flush 1 still finds its own write.
    expect(await leases.writeJournal([flush(1, 3)])).toEqual(new Map());
    expect(await row()).toEqual([{ amount_micro: String(5 * COST), requests: 5 }]);
  });
});

describe('the usage log store', () => {
  /** A pod with a usage log, charging `n` lookups of its own account and flushing them to the ledger and the outbox. */
  async function flushedCharges(billing: Billing, accountId: string, n: number): Promise<void> {
    for (let i = 0; i < n; i++) await billing.deliverOnce({ accountId, tier: 'developer' }, { costMicro: COST });
    await billing.flush();
  }

  it('puts a file again under its name when its store died between claim and delete, so each record is in the bucket once', async () => {
    const { accounts, billing } = billingWithUsageLog();
    const account = await accounts.create({ email: 'claims@example.com', tier: 'developer' });
    const run = randomUUID();
    const log = (pod: string, store: ObjectStore, staleClaimMs?: number) => new UsageLog({ store, db: ctx.db, retentionDays: 35, pod: `${run}-${pod}`, staleClaimMs });

    // A store that puts its file and dies before deleting the rows (a SIGKILL between the two).
    await flushedCharges(billing, account.id, 3);
    const diesAfterPut = {
      putFile: async (...args: Parameters<ObjectStore['putFile']>) => {
        await bucket.store.putFile(...args);
        throw new Error('killed after its put');
      },
    } as unknown as ObjectStore;
    await expect(log('after-put', diesAfterPut).store()).rejects.toThrow('killed after its put');
    // A store whose put fails (its bucket is gone): its claim stays, the file is nowhere.
    await flushedCharges(billing, account.id, 2);
    const missingBucket = storeOn(`uda-missing-${randomUUID()}`);
    await expect(log('before-put', missingBucket).store()).rejects.toThrow();

    // A live store leaves fresh claims alone (their store may still be putting them) ...
    await log('survivor', bucket.store).store();
    expect((await bucket.store.list('usage/')).filter((o) => o.key.includes(run)).map((o) => o.key)).toEqual([expect.stringContaining(`${run}-after-put-`)]);
    // ... and takes them over once stale: each file again under the name its claim gave it.
    await log('survivor', bucket.store, 0).store();
    const files = (await bucket.store.list('usage/')).filter((o) => o.key.includes(run)).map((o) => o.key);
    expect(files.sort()).toEqual([expect.stringContaining(`${run}-after-put-`), expect.stringContaining(`${run}-before-put-`)]);

    const stored = (await readUsageLog(bucket.store, run)).filter((r) => r.account_id === account.id);
    const charges = await ctx.db('ledger').where({ account_id: account.id, kind: 'charge' }).sum<{ micro: string }[]>({ micro: 'amount_micro' });
    expect(stored).toHaveLength(5);
    expect(new Set(stored.map((r) => r.charge_key)).size).toBe(5);
    expect(stored.reduce((total, r) => total + r.cost_micro, 0)).toBe(Number(charges[0]?.micro));
    expect(await ctx.db('usage_outbox').count<{ n: string }[]>({ n: '*' })).toEqual([{ n: '0' }]);
  });

  it('puts a file whose put failed again at the next store of the same pod, without waiting for its claim to go stale', async () => {
    const { accounts, billing } = billingWithUsageLog();
    const account = await accounts.create({ email: 'outage@example.com', tier: 'developer' });
    const run = randomUUID();
    // The bucket is unreachable for the first put (an S3 outage), then back.
    let down = true;
    const outage = {
      putFile: async (...args: Parameters<ObjectStore['putFile']>) => {
        if (down) throw new Error('connect ECONNREFUSED');
        return bucket.store.putFile(...args);
      },
    } as unknown as ObjectStore;
    const log = new UsageLog({ store: outage, db: ctx.db, retentionDays: 35, pod: run });
    await flushedCharges(billing, account.id, 3);
    await expect(log.store()).rejects.toThrow('ECONNREFUSED');
    down = false;
    // The next store (the loop's, or the drain's), long before the claim would go stale.
    await log.store();
    const stored = (await readUsageLog(bucket.store, run)).filter((r) => r.account_id === account.id);
    expect(stored).toHaveLength(3);
    expect(await ctx.db('usage_outbox').count<{ n: string }[]>({ n: '*' })).toEqual([{ n: '0' }]);
  });
});

