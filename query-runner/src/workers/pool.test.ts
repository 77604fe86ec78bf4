import { afterAll, beforeAll, describe, it, expect } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@uda/shared/logger';
import { buildFixtureDb } from '../../test/fixtures.ts';
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
    const runaways = [track('a1', fair.run(slow('a1'), undefined, 'tenant-a')), track('a2', fair.run(slow('a2'), undefined, 'tenant-a'))];
    const other = await fair.run(task('SELECT 7 AS n', 'b1'), undefined, 'tenant-b');
    expect(other.rows).toEqual([{ n: 7 }]);
    // Without the cap, tenant b would have waited for a runaway's deadline.
    expect(settled).toEqual([]);
    await fair.close();
    await Promise.all(runaways);
  });
});
