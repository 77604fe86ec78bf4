import { afterAll, beforeAll, describe, it, expect } from '@jest/globals';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DuckDBInstance } from '@duckdb/node-api';
import { OUT_OF_MEMORY_MESSAGE } from '@uda/shared/duckdb';
import { buildFixtureDb } from '@uda/test-support/runner-fixtures';
import { RunnerError } from './errors.ts';
import { capRows, execute } from './execute.ts';
import type { ExecutionLimits } from './execute.ts';
import { openSandbox } from './sandbox.ts';

const dir = await mkdtemp(join(tmpdir(), 'uda-execute-'));
let instance: DuckDBInstance;
const limits: ExecutionLimits = { maxRows: 1000, timeoutMs: 10_000, maxBytes: 64 * 1024 * 1024, maxCellBytes: 32 * 1024 };

beforeAll(async () => {
  const dbPath = await buildFixtureDb(join(dir, 'service.db'), { books: 5000 });
  instance = await openSandbox(dbPath, { memoryLimit: '512MB', threads: 2, maxTempSize: '64MB', tempDirectory: join(dir, 'tmp') });
});
afterAll(async () => {
  instance.closeSync();
  await rm(dir, { recursive: true, force: true });
});

async function run(sql: string, over: Partial<ExecutionLimits> = {}) {
  const connection = await instance.connect();
  try {
    return await execute(connection, sql, { ...limits, ...over });
  } finally {
    connection.closeSync();
  }
}

async function failure(sql: string, over: Partial<ExecutionLimits> = {}): Promise<RunnerError> {
  const error = await run(sql, over).then(() => undefined, (e: unknown) => e);
  if (!(error instanceof RunnerError)) throw new Error(`expected a RunnerError, got ${String(error)}`);
  return error;
}

describe('execute', () => {
  it('caps rows at 1,000 whatever LIMIT the user wrote, and flags the result truncated', async () => {
    const result = await run('SELECT text_id FROM gutenberg ORDER BY text_id LIMIT 4000');
    expect(result.rows).toHaveLength(1000);
    expect(result.truncated).toBe(true);
    expect(result.rows[999]).toEqual({ text_id: 999 });
    expect(result.sqlExecuted).toBe(capRows('SELECT text_id FROM gutenberg ORDER BY text_id LIMIT 4000', 1000));
    expect(result.sqlExecuted).toMatch(/LIMIT 1000$/);
  });

  it('does not flag exactly 1,000 rows as truncated', async () => {
    const result = await run('SELECT * FROM gutenberg LIMIT 1000');
    expect(result.rows).toHaveLength(1000);
    expect(result.truncated).toBe(false);
  });

  it.each([
    ['describe gutenberg', 6],
    ["pivot census_states on name in ('Ohio', 'Texas') using sum(pop)", 1],
    ['table census_states', 3],
    ['from census_states select name', 3],
    ['values (1), (2)', 2],
    ['select 1 -- trailing comment', 1],
    ['select 1; -- terminator and comment', 1],
    ['SELECT 1;;', 1],
    ['SELECT 1; ; -- two terminators', 1],
  ])('runs %j inside the row-cap wrapper', async (sql, rows) => {
    expect((await run(sql)).rows).toHaveLength(rows);
  });

  it('stops a long query at the deadline with QUERY_TIMEOUT, never a partial result', async () => {
    const error = await failure('SELECT count(*) FROM range(1000000000000) a', { timeoutMs: 300 });
    expect(error.code).toBe('QUERY_TIMEOUT');
  });

  it('treats a stream cut by the deadline as a timeout, not as a complete result', async () => {
    const error = await failure('SELECT a FROM range(1000000000000) t(a) WHERE a % 100000000000 = 0', { timeoutMs: 300 });
    expect(error.code).toBe('QUERY_TIMEOUT');
  });

  it('refuses a result over the byte limit with QUERY_RESULT_TOO_LARGE', async () => {
    const error = await failure("SELECT repeat('x', 100000) AS big FROM range(1000)", { maxBytes: 1024 * 1024 });
    expect(error.code).toBe('QUERY_RESULT_TOO_LARGE');
  });

  it.each([
    ['SELECT list(g) AS everything FROM gutenberg g', 'everything'],
    ['SELECT string_agg(title, chr(10)) AS titles FROM gutenberg', 'titles'],
    ['SELECT language, list(text_id) AS ids FROM gutenberg GROUP BY language', 'ids'],
    ["SELECT map_from_entries(list((text_id, title))) AS m FROM gutenberg", 'm'],
    ["SELECT repeat('x', 40000)::BLOB AS b", 'b'],
  ])('refuses %j: one cell may not carry a table (QUERY_RESULT_TOO_LARGE naming the column)', async (sql, column) => {
    const error = await failure(sql);
    expect(error.code).toBe('QUERY_RESULT_TOO_LARGE');
    expect(error.message).toContain(`"${column}"`);
  });

  it('accepts values under the cell bound: a short list, a modest aggregate', async () => {
    const result = await run('SELECT language, list(text_id ORDER BY text_id)[1:3] AS first_ids, count(*) AS n FROM gutenberg GROUP BY language ORDER BY language');
    expect(result.rows).toEqual([
      { language: 'en', first_ids: [1, 2, 4], n: 3333 },
      { language: 'fr', first_ids: [0, 3, 6], n: 1667 },
    ]);
  });

  it('maps an engine error to QUERY_INVALID with a helpful message and no internal path', async () => {
    const error = await failure('SELECT nope FROM gutenberg');
    expect(error.code).toBe('QUERY_INVALID');
    expect(error.message).toMatch(/nope/);
    expect(error.message).not.toMatch(/LINE 1/);
    const missing = await failure("SELECT * FROM '/srv/secret/data.csv'");
    expect(missing.message).not.toContain('/srv/secret');
  });

  it('keeps every column name in the row objects, __proto__ and constructor included', async () => {
    const result = await run('SELECT 1 AS "__proto__", 2 AS "constructor", 3 AS "toString", 4 AS "hasOwnProperty"');
    expect(result.columns.map((c) => c.name)).toEqual(['__proto__', 'constructor', 'toString', 'hasOwnProperty']);
    const [row] = result.rows;
    expect(Object.keys(row ?? {})).toEqual(['__proto__', 'constructor', 'toString', 'hasOwnProperty']);
    expect(JSON.parse(JSON.stringify(result.rows))).toEqual([JSON.parse('{"__proto__":1,"constructor":2,"toString":3,"hasOwnProperty":4}')]);
  });
});

describe('spill', () => {
  it('answers a query past the memory and spill limits with a clean message: no path, no settings to change', async () => {
    const small = await openSandbox(join(dir, 'service.db'), { memoryLimit: '20MB', threads: 1, maxTempSize: '1MB', tempDirectory: join(dir, 'tmp-small') });
    const connection = await small.connect();
    try {
      const sql = 'SELECT count(*) AS n FROM (SELECT DISTINCT repeat(md5(range::VARCHAR), 3) AS b FROM range(1000000))';
      const error = await execute(connection, sql, limits).then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(RunnerError);
      expect(error).toMatchObject({ code: 'QUERY_INVALID', message: OUT_OF_MEMORY_MESSAGE });
    } finally {
      connection.closeSync();
      small.closeSync();
    }
  });

  it('creates the private spill folder the engine is told to use', async () => {
    const connection = await instance.connect();
    try {
      const reader = await connection.runAndReadAll("SELECT current_setting('temp_directory')");
      const folder = String(reader.getRows()[0]?.[0]);
      expect(folder.startsWith(join(dir, 'tmp'))).toBe(true);
      expect((await stat(folder)).isDirectory()).toBe(true);
    } finally {
      connection.closeSync();
    }
  });
});
