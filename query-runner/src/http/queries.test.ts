/**
 * The internal HTTP API end to end: a real runner on 127.0.0.1:0, a real S3-compatible bucket,
 * real Redis and DuckDB. Tests are named by outcome.
 */
import { afterAll, beforeAll, describe, it, expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { DuckDBInstance } from '@duckdb/node-api';
import { queryResponseSchema, queryResultHeadSchema, RESULT_ENVELOPE_TYPE, runnerErrorSchema } from '@uda/shared/runner-contract';
import { createTestBucket } from '@uda/test-support/s3';
import type { TestBucket } from '@uda/test-support/s3';
import { buildFixtureDb, publishDatabase, tempPath, writeParquet } from '@uda/test-support/runner-fixtures';
import { RUNNER_AUTH, counterValue, postQuery, redisPrefix, runnerEnv, startInProcess, waitReady } from '@uda/test-support/runner-harness';
import { createRedisCoordination } from '../coordination-redis.ts';
import type { StartedRunner } from '../runner.ts';

let bucket: TestBucket;
let runner: StartedRunner;
const prefix = redisPrefix('http');
const dbPath = tempPath('service.db');

beforeAll(async () => {
  bucket = await createTestBucket('runner-http');
  runner = await startInProcess(await runnerEnv(bucket.env, {
    REDIS_KEY_PREFIX: prefix, QUERY_TIMEOUT_MS: '700', QUERY_MAX_RESULT_BYTES: String(2 * 1024 * 1024),
  }));
});

afterAll(async () => {
  await runner.shutdown(1000);
  await bucket.remove();
  await rm(dbPath, { force: true });
});

const query = (sql: string, extra: Record<string, unknown> = {}) =>
  postQuery(runner.url, { queryId: randomUUID(), sql, format: 'json', ...extra });

async function parquetRowCount(key: string): Promise<number> {
  const object = await bucket.store.get(key);
  const path = tempPath('result.parquet');
  const { writeFile } = await import('node:fs/promises');
  const chunks: Buffer[] = [];
  for await (const c of object!.body) chunks.push(Buffer.from(c as Uint8Array));
  await writeFile(path, Buffer.concat(chunks));
  const instance = await DuckDBInstance.create(':memory:');
  const c = await instance.connect();
  const count = Number((await c.runAndReadAll(`SELECT count(*) FROM '${path}'`)).getRows()[0]?.[0]);
  c.closeSync();
  instance.closeSync();
  await rm(path, { force: true });
  return count;
}

describe('readiness', () => {
  it('is not ready until a verified database is open, then ready', async () => {
    expect((await fetch(`${runner.url}/readyz`)).status).toBe(503);
    expect((await fetch(`${runner.url}/healthz`)).status).toBe(200);
    expect((await query('SELECT 1')).body.code).toBe('QUERY_BACKEND_UNAVAILABLE');
    await publishDatabase(bucket.store, await buildFixtureDb(dbPath, { books: 5000 }));
    await waitReady(runner.url);
  });
});

describe('POST /v1/queries', () => {
  it('returns at most 1,000 rows with truncated, sql_executed, columns and rows by source', async () => {
    const res = await query('SELECT text_id, title FROM gutenberg ORDER BY text_id');
    expect(res.status).toBe(200);
    const body = queryResponseSchema.parse(res.body);
    expect(body.cached).toBe(false);
    expect(body.rows).toHaveLength(1000);
    expect(body.rows?.[0]).toEqual({ text_id: 0, title: 'Book 0' });
    expect(body.result).toMatchObject({ rowCount: 1000, truncated: true, tables: ['gutenberg'], rowsBySource: { gutenberg: 1000 } });
    expect(body.result.sqlExecuted).toMatch(/LIMIT 1000$/);
    expect(body.result.columns).toEqual([{ name: 'text_id', type: 'BIGINT' }, { name: 'title', type: 'VARCHAR' }]);
    expect(await parquetRowCount(body.result.objects.parquet.key)).toBe(1000);
  });

  it('serves the same query id from the stored result without running it again', async () => {
    const queryId = randomUUID();
    const before = await counterValue(runner.metricsUrl, 'uda_query_executions_total');
    const first = queryResponseSchema.parse((await postQuery(runner.url, { queryId, sql: 'SELECT name FROM census_states ORDER BY name' })).body);
    const second = queryResponseSchema.parse((await postQuery(runner.url, { queryId, sql: 'SELECT name FROM census_states ORDER BY name' })).body);
    expect(second.cached).toBe(true);
    expect(second.rows).toEqual(first.rows);
    expect(second.result.objects.parquet.etag).toBe(first.result.objects.parquet.etag);
    expect(await counterValue(runner.metricsUrl, 'uda_query_executions_total')).toBe(before + 1);
  });

  it('answers a caller that asks for the result envelope with the head line, then the stored rows as JSON text, first run and re-read alike', async () => {
    const queryId = randomUUID();
    const sql = `SELECT 1 AS "__proto__", 'Zoë — 😀' AS "text" UNION ALL SELECT 2, 'line\nbreak' ORDER BY 1`;
    const envelope = async () => {
      const res = await fetch(`${runner.url}/v1/queries`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: RESULT_ENVELOPE_TYPE, ...RUNNER_AUTH },
        body: JSON.stringify({ queryId, sql, format: 'json' }),
      });
      expect(res.headers.get('content-type')).toContain(RESULT_ENVELOPE_TYPE);
      const text = await res.text();
      const newline = text.indexOf('\n');
      return { head: queryResultHeadSchema.parse(JSON.parse(text.slice(0, newline))), rows: text.slice(newline + 1) };
    };
    const first = await envelope();
    const again = await envelope();
    const expected = '[{"__proto__":1,"text":"Zoë — 😀"},{"__proto__":2,"text":"line\\nbreak"}]';
    expect([first.head.cached, first.rows]).toEqual([false, expected]);
    expect([again.head.cached, again.rows]).toEqual([true, expected]);
    expect(first.head.result.rowCount).toBe(2);
    // Without the envelope, the same rows inside the plain JSON answer.
    expect((await postQuery(runner.url, { queryId, sql })).body.rows).toEqual(JSON.parse(expected));
  });

  it('bills a query that reads no table to no source', async () => {
    const body = queryResponseSchema.parse((await query('SELECT 42 AS answer')).body);
    expect(body.result.rowsBySource).toEqual({});
    expect(body.rows).toEqual([{ answer: 42 }]);
  });

  it('stores Parquet first and produces CSV and JSON on request, for any runner to serve', async () => {
    const queryId = randomUUID();
    const parquet = queryResponseSchema.parse((await postQuery(runner.url, { queryId, sql: 'FROM census_states ORDER BY pop', format: 'parquet' })).body);
    expect(parquet.rows).toBeUndefined();
    expect(parquet.result.objects.csv).toBeUndefined();
    const csv = queryResponseSchema.parse(await (await fetch(`${runner.url}/v1/results/${queryId}/csv`, { headers: RUNNER_AUTH })).json());
    const object = await bucket.store.get(csv.result.objects.csv!.key);
    let text = '';
    for await (const c of object!.body) text += Buffer.from(c as Uint8Array).toString('utf8');
    expect(text.split('\n')[0]).toBe('name,pop');
    expect(csv.result.objects.csv!.key).toMatch(new RegExp(`^results/${queryId}/\\d+/result\\.csv$`));
    const json = queryResponseSchema.parse(await (await fetch(`${runner.url}/v1/results/${queryId}/json`, { headers: RUNNER_AUTH })).json());
    expect(json.rows?.[0]).toEqual({ name: 'Vermont', pop: 647464 });
  });

  it('exposes connected sheets as tables while the sandbox still refuses files', async () => {
    const local = await writeParquet(tempPath('sheet.parquet'), "SELECT 'Ohio' AS state, 'rainy' AS note");
    await bucket.store.putFile('sheets/acct/1/data.parquet', local);
    const datasets = [{ name: 'my_notes', key: 'sheets/acct/1/data.parquet' }];
    const res = await query('SELECT note, pop FROM my_notes JOIN census_states ON state = name', { datasets });
    expect(res.body.rows).toEqual([{ note: 'rainy', pop: 11785935 }]);
    expect((res.body.result as { rowsBySource: unknown }).rowsBySource).toEqual({ census: 1 });
    const escape = await query("SELECT * FROM '/etc/passwd'", { datasets });
    expect(escape.status).toBe(400);
    expect(escape.body.message).not.toContain('/etc/passwd');
    await rm(local, { force: true });
  });
});

describe('errors', () => {
  it.each([
    ['a disallowed word in a literal', "SELECT * FROM gutenberg WHERE title = 'drop'", 'Disallowed operation: DROP'],
    ['EXPLAIN', 'EXPLAIN SELECT 1', 'Only SELECT statements are allowed.'],
    ['missing SQL', '', 'SQL is required: send one SELECT statement in the `sql` field.'],
    ['SQL over 10,000 characters', `SELECT 1${' '.repeat(10_000)}`, 'SQL is too long: 10008 characters, the limit is 10,000.'],
  ])('answers 400 QUERY_INVALID for %s', async (_label, sql, message) => {
    const res = await query(sql);
    expect(res.status).toBe(400);
    expect(runnerErrorSchema.strict().parse(res.body)).toEqual({ code: 'QUERY_INVALID', message });
  });

  it('answers 400 QUERY_INVALID with the engine hint for a bad column', async () => {
    const res = await query('SELECT no_such_column FROM gutenberg');
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/no_such_column/);
  });

  it('answers 408 QUERY_TIMEOUT and releases the lock so a retry runs (and times out) again', async () => {
    const queryId = randomUUID();
    const body = { queryId, sql: 'SELECT count(*) FROM range(1000000000000)' };
    const first = await postQuery(runner.url, body);
    expect(first.status).toBe(408);
    expect(first.body.code).toBe('QUERY_TIMEOUT');
    // The worker time it took, which the API counts against the caller's budget (DECISIONS §4).
    expect(runnerErrorSchema.parse(first.body).workerMs).toBeGreaterThan(0);
    expect((await postQuery(runner.url, body)).status).toBe(408);
    expect(await counterValue(runner.metricsUrl, 'uda_query_timeouts_total')).toBeGreaterThanOrEqual(2);
  });

  it('answers 413 QUERY_RESULT_TOO_LARGE over the byte limit', async () => {
    const res = await query("SELECT repeat('x', 10000) AS big FROM range(1000)");
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('QUERY_RESULT_TOO_LARGE');
  });

  it('answers 503 QUERY_BUSY with Retry-After while another runner holds the query lock', async () => {
    const queryId = randomUUID();
    const other = createRedisCoordination(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', prefix);
    const held = await other.locks.acquire(queryId, 10_000);
    const res = await postQuery(runner.url, { queryId, sql: 'SELECT 1' });
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ code: 'QUERY_BUSY' });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    if (held.acquired) await held.lock.release();
    await other.close();
    expect((await postQuery(runner.url, { queryId, sql: 'SELECT 1' })).status).toBe(200);
  });

  it('answers 404 RESULT_NOT_FOUND for a result that was never stored, and 400 for a bad request', async () => {
    expect((await fetch(`${runner.url}/v1/results/${randomUUID()}/csv`, { headers: RUNNER_AUTH })).status).toBe(404);
    expect((await postQuery(runner.url, { sql: 'SELECT 1' })).body.code).toBe('QUERY_INVALID');
  });

  it('answers 400 when a dataset name shadows a service table', async () => {
    const res = await query('SELECT 1', { datasets: [{ name: 'gutenberg', key: 'sheets/x' }] });
    expect(res.status).toBe(400);
  });
});

describe('metrics', () => {
  it('exposes the duration histogram by outcome and the data version', async () => {
    const text = await (await fetch(runner.metricsUrl)).text();
    expect(text).toMatch(/uda_query_duration_seconds_count\{outcome="QUERY_TIMEOUT"\} \d+/);
    expect(text).toMatch(/uda_data_version_info\{version="[^"]+"\} 1/);
    expect(text).toContain('uda_queries_running');
  });
});
