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
});
