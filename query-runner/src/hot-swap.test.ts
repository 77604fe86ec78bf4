/**
 * Hot swap under load: a new export version is downloaded, verified, opened and swapped
 * in while queries keep running, with zero failed queries; the old file is deleted once drained,
 * and a database whose sha256 does not match is never opened.
 */
import { afterAll, beforeAll, describe, it, expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createTestBucket } from '@uda/test-support/s3';
import type { TestBucket } from '@uda/test-support/s3';
import { buildFixtureDb, publishDatabase, tempPath } from '@uda/test-support/runner-fixtures';
import { postQuery, redisPrefix, runnerEnv, startInProcess, waitReady } from '@uda/test-support/runner-harness';
import type { StartedRunner } from './runner.ts';

let bucket: TestBucket;
let runner: StartedRunner;
let dataDir: string;
const paths = [tempPath('v1.db'), tempPath('v2.db'), tempPath('v3.db')];

beforeAll(async () => {
  bucket = await createTestBucket('runner-swap');
  await publishDatabase(bucket.store, await buildFixtureDb(paths[0]!, { books: 5000 }), new Date(Date.UTC(2026, 0, 1)));
  const env = await runnerEnv(bucket.env, { REDIS_KEY_PREFIX: redisPrefix('swap'), MANIFEST_POLL_MS: '100' });
  dataDir = env.DATA_DIR!;
  runner = await startInProcess(env);
  await waitReady(runner.url);
});

afterAll(async () => {
  await runner.shutdown(1000);
  await bucket.remove();
  for (const p of paths) await rm(p, { force: true });
  await rm(dataDir, { recursive: true, force: true });
});

async function versionDirs(): Promise<string[]> {
  const [work] = await readdir(dataDir);
  return readdir(join(dataDir, work!, 'db'));
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('hot swap', () => {
  it('swaps in a new version under steady load with zero failed queries, then deletes the old file', async () => {
    const v1 = runner.databases.version;
    const counts = new Set<number>();
    const failures: unknown[] = [];
    let stop = false;
    const worker = async () => {
      while (!stop) {
        const res = await postQuery(runner.url, { queryId: randomUUID(), sql: 'SELECT count(*) AS n, max(length(title)) FROM gutenberg' });
        if (res.status === 200) counts.add((res.body.rows as { n: number }[])[0]!.n);
        else failures.push(res.body);
      }
    };
    const workers = Array.from({ length: 4 }, worker);
    await new Promise((r) => setTimeout(r, 500));
    const v2 = await publishDatabase(bucket.store, await buildFixtureDb(paths[1]!, { books: 6000 }), new Date(Date.UTC(2026, 0, 2)));
    await until(() => runner.databases.version === v2.version);
    await until(() => counts.has(6000));
    stop = true;
    await Promise.all(workers);
    expect(failures).toEqual([]);
    expect([...counts].sort()).toEqual([5000, 6000]);
    await until(async () => !(await versionDirs()).includes(v1!));
    expect(await versionDirs()).toEqual([v2.version]);
  });

  it('keeps the current version when the new file fails its sha256 check', async () => {
    const current = runner.databases.version;
    const badSha = '0'.repeat(64);
    await publishDatabase(bucket.store, await buildFixtureDb(paths[2]!, { books: 7000 }), new Date(Date.UTC(2026, 0, 3)), badSha);
    await runner.databases.checkNow();
    expect(runner.databases.version).toBe(current);
    expect(await versionDirs()).toEqual([current]);
    const res = await postQuery(runner.url, { queryId: randomUUID(), sql: 'SELECT count(*) AS n FROM gutenberg' });
    expect(res.body.rows).toEqual([{ n: 6000 }]);
  });
});
