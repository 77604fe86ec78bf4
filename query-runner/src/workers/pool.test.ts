import { afterAll, beforeAll, describe, it, expect } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@uda/shared/logger';
import { buildFixtureDb } from '@uda/test-support/runner-fixtures';
import { createQueryPool } from './pool.ts';
import type { QueryPool } from './pool.ts';

const dir = await mkdtemp(join(tmpdir(), 'uda-pool-'));
let dbPath: string;
let pool: QueryPool;
const limits = { maxRows: 1000, timeoutMs: 10_000, maxBytes: 64 * 1024 * 1024, maxCellBytes: 32 * 1024 };

beforeAll(async () => {
  dbPath = await buildFixtureDb(join(dir, 'service.db'), { books: 100 });
  pool = createQueryPool({
    size: 1, maxRssBytes: 2 * 1024 ** 3, killGraceMs: 500, rssPollMs: 100, logger: createLogger({ name: 'pool-test', level: 'silent' }),
    sandboxLimits: { memoryLimit: '256MB', threads: 1, maxTempSize: '64MB', tempDirectory: join(dir, 'tmp') },
  });
});
afterAll(async () => {
  await pool.close();
  await rm(dir, { recursive: true, force: true });
});

const task = (sql: string, name: string) => ({ sql, dbPath, sheets: [], limits, parquetPath: join(dir, `${name}.parquet`) });

describe('query pool', () => {
  it('queues queries beyond its size and answers each with its own rows', async () => {
    const answers = await Promise.all([1, 2, 3, 4].map((n) => pool.run(task(`SELECT ${n} AS n, count(*)::INT AS books FROM gutenberg`, `q${n}`))));
    expect(answers.map((a) => a.rows)).toEqual([1, 2, 3, 4].map((n) => [{ n, books: 100 }]));
  });

  it('reports engine errors from the worker as runner errors', async () => {
    await expect(pool.run(task('SELECT nope FROM gutenberg', 'bad'))).rejects.toMatchObject({ code: 'QUERY_INVALID', message: expect.stringContaining('nope') });
  });

  it('gives one tenant at most half the workers: a runaway caller leaves a worker for everyone else', async () => {
    const fair = createQueryPool({
      size: 2, maxRssBytes: 2 * 1024 ** 3, killGraceMs: 500, rssPollMs: 100, logger: createLogger({ name: 'pool-fair', level: 'silent' }),
      sandboxLimits: { memoryLimit: '256MB', threads: 1, maxTempSize: '64MB', tempDirectory: join(dir, 'tmp-fair') },
    });
    const settled: string[] = [];
    const track = (name: string, outcome: Promise<unknown>) => outcome.then(
      () => settled.push(name),
      () => settled.push(name),
    );
    // Two long queries of one tenant: only one may hold a worker; the other waits for it.
    const long = { ...limits, timeoutMs: 10_000 };
    const slow = (name: string) => ({ ...task('SELECT count(*) FROM range(100000000000) a', name), limits: long });
    const runaways = [track('a1', fair.run(slow('a1'), { tenant: 'tenant-a' })), track('a2', fair.run(slow('a2'), { tenant: 'tenant-a' }))];
    const other = await fair.run(task('SELECT 7 AS n', 'b1'), { tenant: 'tenant-b' });
    expect(other.rows).toEqual([{ n: 7 }]);
    // Without the cap, tenant b would have waited for a runaway's deadline.
    expect(settled).toEqual([]);
    await fair.close();
    await Promise.all(runaways);
  });

  const poolOf = (size: number, name: string) =>
    createQueryPool({
      size, maxRssBytes: 2 * 1024 ** 3, killGraceMs: 500, rssPollMs: 100, logger: createLogger({ name, level: 'silent' }),
      sandboxLimits: { memoryLimit: '256MB', threads: 1, maxTempSize: '64MB', tempDirectory: join(dir, `tmp-${name}`) },
    });
  const endless = (name: string, timeoutMs = 10_000) => ({ ...task('SELECT count(*) FROM range(100000000000) a', name), limits: { ...limits, timeoutMs } });

  it('hands a freed worker to the waiting tenant that holds the fewest workers, not to the oldest waiter', async () => {
    const fair = poolOf(4, 'pool-turns');
    const order: string[] = [];
    const track = (name: string, outcome: Promise<unknown>) => outcome.then(() => order.push(name), () => order.push(name));
    // Tenants a and b each hold their cap (2 of 4 workers); a's first query ends soon at its deadline.
    const running = [
      track('a1', fair.run(endless('a1', 500), { tenant: 'tenant-a' })),
      track('a2', fair.run(endless('a2'), { tenant: 'tenant-a' })),
      track('b1', fair.run(endless('b1'), { tenant: 'tenant-b' })),
      track('b2', fair.run(endless('b2'), { tenant: 'tenant-b' })),
    ];
    // a3 waits first, then d1 (a tenant holding nothing): d1 gets a1's worker, a3 the next one.
    const a3 = track('a3', fair.run(task('SELECT 3 AS n', 'a3'), { tenant: 'tenant-a' }));
    const d1 = track('d1', fair.run(task('SELECT 4 AS n', 'd1'), { tenant: 'tenant-d' }));
    await Promise.all([a3, d1]);
    expect(order).toEqual(['a1', 'd1', 'a3']);
    await fair.close();
    await Promise.all(running);
  });

  it('refuses a query that waited past its bound, and a query whose caller left gives its worker back', async () => {
    const single = poolOf(1, 'pool-bounds');
    const caller = new AbortController();
    const running = single.run(endless('held'), { signal: caller.signal, tenant: 'tenant-a' });
    const waited = await single.run(task('SELECT 1 AS n', 'late'), { tenant: 'tenant-b', waitUntil: Date.now() + 200 }).catch((e: unknown) => e);
    expect(waited).toMatchObject({ code: 'QUERY_BACKEND_UNAVAILABLE', retryAfterSeconds: 1 });
    caller.abort();
    await expect(running).rejects.toMatchObject({ code: 'QUERY_BACKEND_UNAVAILABLE' });
    // The killed worker is replaced: the next query runs long before the endless one's deadline would have come.
    expect((await single.run(task('SELECT 2 AS n', 'after'), { tenant: 'tenant-b' })).rows).toEqual([{ n: 2 }]);
    await single.close();
  });

  it('a paid query takes back a worker the free class borrowed: the newest borrower is stopped, unbilled, and runs again once a worker is free', async () => {
    // Three workers: one is the free class's share, two the paid class's; the free class may borrow all but the last idle one.
    const classes = poolOf(3, 'pool-classes');
    const settled: string[] = [];
    const track = <T>(name: string, outcome: Promise<T>) => outcome.then((v) => (settled.push(name), v), (e: unknown) => (settled.push(name), e));
    // The free class's own query outlives the test, so only the reclaim can move the borrowed one.
    const own = track('own', classes.run(endless('own', 120_000), { tenant: 'tenant-a', capacityClass: 'free' }));
    const borrowed = track('borrowed', classes.run(task('SELECT 5 AS n', 'borrowed'), { tenant: 'tenant-b', capacityClass: 'free' }));
    // The paid slot the free class left idle: a paid query takes it, until its deadline.
    const paidLong = track('paid-long', classes.run(endless('paid-long', 1_000), { tenant: 'tenant-c', capacityClass: 'paid' }));
    // No slot is idle now: the next paid query takes back the borrowed one.
    const paid = await classes.run(task('SELECT 9 AS n', 'paid'), { tenant: 'tenant-d', capacityClass: 'paid' });
    expect(paid.rows).toEqual([{ n: 9 }]);
    // Taken back, the borrowed query waits again instead of failing its caller; it may borrow again
    // once paid-long's deadline frees a second worker.
    expect(settled).not.toContain('borrowed');
    expect(await borrowed).toMatchObject({ rows: [{ n: 5 }] });
    expect(await paidLong).toMatchObject({ code: 'QUERY_TIMEOUT' });
    await classes.close();
    await own;
  });

  it('a timeout reports the worker time it took, for the caller\'s budget', async () => {
    const single = poolOf(1, 'pool-spent');
    const error = await single.run(endless('spent', 300)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'QUERY_TIMEOUT', workerMs: expect.any(Number) });
    expect((error as { workerMs: number }).workerMs).toBeGreaterThan(0);
    await single.close();
  });
});
