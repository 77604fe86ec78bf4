/**
 * The worker supervisor on its own: real worker processes over a real DuckDB file, no scheduler.
 * Nothing here asserts a duration.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@uda/shared/logger';
import { buildFixtureDb } from '@uda/test-support/runner-fixtures';
import { RunnerError } from '../errors.ts';
import { type SupervisorOptions, createWorkerSupervisor } from './supervisor.ts';

const dir = await mkdtemp(join(tmpdir(), 'uda-supervisor-'));
let dbPath: string;
const limits = { maxRows: 1000, timeoutMs: 20_000, maxBytes: 64 * 1024 * 1024, maxCellBytes: 32 * 1024 };
/** Runs until it is interrupted or its worker is killed. */
const ENDLESS = 'SELECT count(*) FROM range(100000000000) a';

beforeAll(async () => {
  dbPath = await buildFixtureDb(join(dir, 'service.db'), { books: 10 });
}, 60_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const options = (overrides: Partial<SupervisorOptions> = {}): SupervisorOptions => ({
  size: 1,
  maxRssBytes: 2 * 1024 ** 3,
  killGraceMs: 500,
  rssPollMs: 50,
  logger: createLogger({ name: 'supervisor-test', level: 'silent' }),
  sandboxLimits: { memoryLimit: '256MB', threads: 1, maxTempSize: '64MB', tempDirectory: join(dir, 'tmp') },
  ...overrides,
});
const task = (sql: string, name: string) => ({ sql, dbPath, sheets: [], limits, parquetPath: join(dir, `${name}.parquet`) });

describe('worker supervisor', () => {
  it('hands out at most `size` workers, and runs a task on one', async () => {
    const supervisor = createWorkerSupervisor(options());
    try {
      const worker = supervisor.takeIdle();
      expect(worker?.busy).toBe(true);
      expect(supervisor.takeIdle()).toBeUndefined();
      await worker!.ready;
      let lost = false;
      const outcome = await supervisor.runOn(worker!, task('SELECT count(*)::INT AS books FROM gutenberg', 'count'), undefined, () => (lost = true));
      expect(outcome.rows).toEqual([{ books: 10 }]);
      expect(lost).toBe(false);
      expect(supervisor.has(worker!)).toBe(true);
    } finally {
      await supervisor.close();
    }
  }, 60_000);

  it('kills a worker past the memory ceiling, refuses its query, and keeps a worker warm', async () => {
    let kills = 0;
    // Any running worker is past a one-byte ceiling: the first reading kills it.
    const supervisor = createWorkerSupervisor(options({ maxRssBytes: 1, onKill: () => kills++ }));
    try {
      const worker = supervisor.takeIdle()!;
      await worker.ready;
      let lost = false;
      await expect(supervisor.runOn(worker, task(ENDLESS, 'memory'), undefined, () => (lost = true))).rejects.toMatchObject({ code: 'QUERY_INVALID', message: expect.stringContaining('memory') });
      expect(lost).toBe(true);
      expect(kills).toBe(1);
      expect(supervisor.has(worker)).toBe(false);
      await supervisor.warm();
      const fresh = supervisor.takeIdle();
      expect(fresh).toBeDefined();
      expect(fresh).not.toBe(worker);
    } finally {
      await supervisor.close();
    }
  }, 60_000);

  it('kills the worker of a query whose caller stopped waiting, with the reason the caller gave', async () => {
    const supervisor = createWorkerSupervisor(options());
    try {
      const worker = supervisor.takeIdle()!;
      await worker.ready;
      const controller = new AbortController();
      const running = supervisor.runOn(worker, task(ENDLESS, 'abort'), controller.signal, () => undefined);
      const reason = new RunnerError('QUERY_BACKEND_UNAVAILABLE', 'the caller went away', 1);
      controller.abort(reason);
      await expect(running).rejects.toBe(reason);
      expect(supervisor.has(worker)).toBe(false);
    } finally {
      await supervisor.close();
    }
  }, 60_000);
});
