/**
 * `POST /v1/sheets/search` on an in-process runner over the real object store: every column as
 * text, case-insensitive, the text bound as data, the row cap, bad requests, and the deadline; and
 * the stored lookups' forgiveness over its text columns (stems, typos), contained text first; and a
 * changed sheet (a new version's key) answered from its new rows, while the open versions are cached.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestBucket, type TestBucket } from '@uda/test-support/s3';
import { buildFixtureDb, publishDatabase, tempPath, writeParquet } from '@uda/test-support/runner-fixtures';
import { RUNNER_AUTH, redisPrefix, runnerEnv, startInProcess } from '@uda/test-support/runner-harness';
import type { StartedRunner } from '../runner.ts';
import { likePattern } from '@uda/search/sheets';

let bucket: TestBucket;
let runner: StartedRunner;
let slow: StartedRunner;

beforeAll(async () => {
  bucket = await createTestBucket('sheetsearch');
  await publishDatabase(bucket.store, await buildFixtureDb(tempPath('service.db'), { books: 10 }));
  const sheet = await writeParquet(
    tempPath('s.parquet'),
    `SELECT range AS id, 'Name ' || range AS "Full Name", DATE '2024-01-01' + range::INT AS day, (range * 1.5)::DOUBLE AS price FROM range(2000)`,
  );
  await bucket.store.putFile('sheets/a/s/1.parquet', sheet);
  const foods = await writeParquet(
    tempPath('foods.parquet'),
    `SELECT * FROM (VALUES (1, 'Toppings, strawberry', 'Sweets'), (2, 'Strawberries, frozen, sweetened', 'Fruits'),
       (3, 'Egg, whole, raw', 'Dairy and Egg Products'), (4, 'Fish, herring eggs', 'Finfish'), (5, 'Chicken breast, roasted', 'Poultry'))
     AS t(id, description, category)`,
  );
  await bucket.store.putFile('sheets/a/foods/1.parquet', foods);
  const big = await writeParquet(tempPath('big.parquet'), `SELECT range AS id, 'text ' || range AS t, range * 2 AS n FROM range(6000000)`);
  await bucket.store.putFile('sheets/a/big/1.parquet', big);
  runner = await startInProcess(await runnerEnv(bucket.env, { REDIS_KEY_PREFIX: redisPrefix('sheetsearch') }));
  slow = await startInProcess(await runnerEnv(bucket.env, { REDIS_KEY_PREFIX: redisPrefix('sheetsearch'), QUERY_TIMEOUT_MS: '100' }));
  await Promise.all([waitForDb(runner), waitForDb(slow)]);
});
afterAll(async () => {
  await runner.shutdown(0);
  await slow.shutdown(0);
  await bucket.remove();
});

async function waitForDb(started: StartedRunner): Promise<void> {
  while (!started.databases.ready) await new Promise((r) => setTimeout(r, 50));
}

async function post(url: string, body: unknown) {
  const res = await fetch(`${url}/v1/sheets/search`, { method: 'POST', headers: { 'content-type': 'application/json', ...RUNNER_AUTH }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as { rows?: Record<string, unknown>[]; code?: string; message?: string } };
}

describe('POST /v1/sheets/search', () => {
  it('matches text, number and date columns case-insensitively', async () => {
    const ids = async (q: string) => (await post(runner.url, { key: 'sheets/a/s/1.parquet', q })).body.rows!.map((r) => r.id);
    expect(await ids('NAME 1999')).toEqual([1999]);
    expect(await ids('2024-01-05')).toEqual([4]);
    expect(await ids('2998.5')).toEqual([1999]);
    expect((await post(runner.url, { key: 'sheets/a/s/1.parquet', q: 'name 1999' })).body.rows).toEqual([
      { id: 1999, 'Full Name': 'Name 1999', day: '2029-06-22', price: 2998.5 },
    ]);
  });

  it('treats the text as data: quotes and LIKE wildcards match literally', async () => {
    expect((await post(runner.url, { key: 'sheets/a/s/1.parquet', q: "' OR 1=1 --" })).body.rows).toEqual([]);
    expect((await post(runner.url, { key: 'sheets/a/s/1.parquet', q: '%' })).body.rows).toEqual([]);
    expect(likePattern('50%_\\')).toBe('%50\\%\\_\\\\%');
  });

  it('forgives over the text columns: plurals and inflections by stem, typos; contained text first, then the closest words', async () => {
    const ids = async (q: string) => (await post(runner.url, { key: 'sheets/a/foods/1.parquet', q })).body.rows!.map((r) => r.id);
    expect(await ids('strawberry')).toEqual([1, 2]);
    expect(await ids('strawberries')).toEqual([2, 1]);
    expect(await ids('eggs')).toEqual([4, 3]);
    expect(await ids('strawbery')).toEqual([1, 2]);
    expect(await ids('chiken breasts')).toEqual([5]);
    expect(await ids('egg fish')).toEqual([4]);
    expect(await ids('zzqxv')).toEqual([]);
  });

  it('answers a changed sheet from its new version: each version has a key of its own', async () => {
    const search = async (version: number, q: string) =>
      (await post(runner.url, { key: `sheets/a/versions/${version}.parquet`, q })).body.rows!.map((r) => r.label);
    const first = await writeParquet(tempPath('v1.parquet'), `SELECT * FROM (VALUES (1, 'alpha orchard'), (2, 'beta river')) AS t(id, label)`);
    await bucket.store.putFile('sheets/a/versions/1.parquet', first);
    expect(await search(1, 'orchards')).toEqual(['alpha orchard']);
    const second = await writeParquet(tempPath('v2.parquet'), `SELECT * FROM (VALUES (1, 'gamma orchard'), (2, 'delta orchard')) AS t(id, label)`);
    await bucket.store.putFile('sheets/a/versions/2.parquet', second);
    expect(await search(2, 'orchards')).toEqual(['gamma orchard', 'delta orchard']);
    expect(await search(2, 'alpha')).toEqual([]);
    expect(await search(1, 'orchards')).toEqual(['alpha orchard']);
  });

  it('caps rows at the limit', async () => {
    expect((await post(runner.url, { key: 'sheets/a/s/1.parquet', q: 'name', limit: 1000 })).body.rows).toHaveLength(1000);
    expect((await post(runner.url, { key: 'sheets/a/s/1.parquet', q: 'name' })).body.rows).toHaveLength(1000);
  });

  it('400 QUERY_INVALID on a bad request or a missing sheet', async () => {
    expect(await post(runner.url, { key: 'sheets/a/s/1.parquet', q: 'x'.repeat(501) })).toMatchObject({ status: 400, body: { code: 'QUERY_INVALID' } });
    expect(await post(runner.url, { key: 'sheets/a/s/1.parquet', q: 'x', limit: 1001 })).toMatchObject({ status: 400, body: { code: 'QUERY_INVALID' } });
    expect(await post(runner.url, { key: 'sheets/none.parquet', q: 'x' })).toMatchObject({ status: 400, body: { code: 'QUERY_INVALID' } });
  });

  it('408 QUERY_TIMEOUT when the search outlives the deadline', async () => {
    expect(await post(slow.url, { key: 'sheets/a/big/1.parquet', q: 'no such text' })).toMatchObject({ status: 408, body: { code: 'QUERY_TIMEOUT' } });
  });
});
