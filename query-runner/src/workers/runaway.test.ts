/**
 * A query the engine cannot interrupt ends anyway. Runaway queries run in worker
 * processes that the runner kills at the hard deadline or at the memory ceiling, while other
 * queries keep answering and the runner process itself stays small. Memory is read from /proc;
 * nothing here asserts a duration.
 */
import { afterAll, beforeAll, describe, it, expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { createTestBucket } from '@uda/test-support/s3';
import type { TestBucket } from '@uda/test-support/s3';
import { buildFixtureDb, publishDatabase, tempPath } from '@uda/test-support/runner-fixtures';
import { counterValue, postQuery, redisPrefix, runnerEnv, startChild, waitReady } from '@uda/test-support/runner-harness';
import type { ChildRunner } from '@uda/test-support/runner-harness';
import { rssOf } from './supervisor.ts';

const CAP_MB = 400;
let bucket: TestBucket;
let runner: ChildRunner;
const dbPath = tempPath('service.db');

beforeAll(async () => {
  bucket = await createTestBucket('runner-runaway');
  runner = await startChild(await runnerEnv(bucket.env, {
    REDIS_KEY_PREFIX: redisPrefix('runaway'),
    QUERY_TIMEOUT_MS: '1500',
    QUERY_KILL_GRACE_MS: '300',
    QUERY_WORKERS: '4',
    QUERY_WORKER_MAX_RSS_MB: String(CAP_MB),
    DUCKDB_MEMORY_LIMIT: '256MB',
  }));
  await publishDatabase(bucket.store, await buildFixtureDb(dbPath, { books: 2000 }));
  await waitReady(runner.url);
});

afterAll(async () => {
  runner.child.kill('SIGTERM');
  await runner.exited;
  await bucket.remove();
  await rm(dbPath, { force: true });
});

const query = (sql: string) => postQuery(runner.url, { queryId: randomUUID(), sql, format: 'json' });

/** The runner's worker processes, from /proc (the runner is a child process of this test). */
async function workerPids(of: ChildRunner = runner): Promise<number[]> {
  const pid = of.child.pid!;
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  return text.split(' ').filter(Boolean).map(Number);
}

const kills = () => counterValue(runner.metricsUrl, 'uda_query_worker_kills_total');

/** Samples the resident memory of the runner and of every worker until `stop` resolves. */
async function sampleMemory(stop: Promise<unknown>): Promise<{ runner: number; worker: number }> {
  const peak = { runner: 0, worker: 0 };
  let done = false;
  void stop.finally(() => (done = true));
  while (!done) {
    peak.runner = Math.max(peak.runner, (await rssOf(runner.child.pid)) ?? 0);
    for (const pid of await workerPids()) peak.worker = Math.max(peak.worker, (await rssOf(pid)) ?? 0);
    await new Promise((r) => setTimeout(r, 20));
  }
  return peak;
}

describe('runaway queries', () => {
  it('ends uninterruptible queries (408 at the deadline, 400 at the memory ceiling) while other queries keep answering', async () => {
    const killsBefore = await kills();
    const runaways = Promise.all([
      query('SELECT len(flatten(list_transform(range(15000), x -> range(x)))) AS n'),
      query("SELECT length(repeat('x', 4000000000)) AS n"),
      query("SELECT levenshtein(repeat('a', 80000), repeat('b', 80000)) AS d"),
    ]);
    const others = (async () => {
      const answers = [];
      // Other callers' point queries, one after another, for as long as the runaways run.
      let finished = false;
      void runaways.finally(() => (finished = true));
      while (!finished) answers.push(await query('SELECT 1 AS one'));
      return answers;
    })();
    const peak = sampleMemory(runaways);
    const ended = await runaways;
    for (const res of ended) {
      expect([400, 408]).toContain(res.status);
      if (res.status === 400) expect(res.body.message).toMatch(/more than 400 MB of memory/);
      if (res.status === 408) expect(res.body.code).toBe('QUERY_TIMEOUT');
    }
    const answers = await others;
    expect(answers.length).toBeGreaterThan(0);
    expect(answers.every((res) => res.status === 200)).toBe(true);
    expect((await kills()) - killsBefore).toBeGreaterThanOrEqual(3);
    // The runner process never runs user SQL: its memory stays under the cap. Workers are
    // killed at the cap; a 100 ms poll lets a fast allocation overshoot it, never reach gigabytes.
    const { runner: runnerRss, worker: workerRss } = await peak;
    expect(runnerRss).toBeLessThan(CAP_MB * 1024 * 1024);
    expect(workerRss).toBeLessThan(2 * CAP_MB * 1024 * 1024);
    // Fresh workers serve the next queries.
    expect((await query('SELECT count(*) AS n FROM gutenberg')).body).toMatchObject({ rows: [{ n: 2000 }] });
  });

  it('keeps serving when a worker dies under a query: that query is a retryable 503, the next one answers', async () => {
    const running = query("SELECT levenshtein(repeat('a', 60000), repeat('b', 60000)) AS d");
    // Kill every worker to be sure to hit the one running the query (it runs for seconds).
    await new Promise((r) => setTimeout(r, 500));
    for (const pid of await workerPids()) process.kill(pid, 'SIGKILL');
    const res = await running;
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('QUERY_BACKEND_UNAVAILABLE');
    expect((await query('SELECT 2 AS two')).body).toMatchObject({ rows: [{ two: 2 }] });
  });

  it('leaves no worker behind when the runner itself is SIGKILLed mid-query', async () => {
    const other = await startChild(await runnerEnv(bucket.env, { REDIS_KEY_PREFIX: redisPrefix('orphan') }));
    await waitReady(other.url);
    void postQuery(other.url, { queryId: randomUUID(), sql: 'SELECT sum(hash(i)) AS h FROM range(4000000000) r(i)' }).catch(() => undefined);
    let pids: number[] = [];
    while (pids.length === 0) pids = await workerPids(other);
    await new Promise((r) => setTimeout(r, 300));
    other.child.kill('SIGKILL');
    await other.exited;
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    // Polled, not timed: the test fails by its own timeout if a worker keeps running.
    while (pids.some(alive)) await new Promise((r) => setTimeout(r, 100));
    expect(pids.filter(alive)).toEqual([]);
  });
});
