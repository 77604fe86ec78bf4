/**
 * `npm run bench:runner`: the runner's end-to-end time (HTTP, validation, lock, sandbox, result
 * store) against DuckDB's own in-process time for the same SQL on the same file, in the same run.
 * Prints the ratio per query and p50/p99 at concurrency 1 and 8. Goal: ratio ≤ 1.3 for
 * queries over 50 ms, ≤ 5 ms absolute overhead for point lookups. Then the isolation figures:
 * the allow-list check and the worker hand-off at the point lookup (goal ≤ 1 ms
 * together), and the time from a deadline kill to a fresh worker ready.
 *
 * The bench database is generated at run time (BENCH_ROWS rows, default 5,000,000) and deleted after.
 * Runs with the embedded stores (local folder, in-process locks) unless REDIS_URL / S3_* are set.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { LocalFolderStore } from '@uda/shared/object-store';
import { createLogger } from '@uda/shared/logger';
import { createSqlParser, refusedReference, validateSql } from '@uda/shared/sql';
import { capRows, execute } from '../src/execute.ts';
import { createResultWriter } from '../src/result-writer.ts';
import { openSandbox } from '../src/sandbox.ts';
import { createQueryPool } from '../src/workers/pool.ts';
import { publishDatabase } from '@uda/test-support/runner-fixtures';
import { postQuery, startChild, waitReady } from '@uda/test-support/runner-harness';

const ROWS = Number(process.env.BENCH_ROWS ?? 5_000_000);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 40);
const THREADS = process.env.DUCKDB_THREADS ?? '2';

const QUERIES = [
  { name: 'point lookup', format: 'json', sql: 'SELECT * FROM gutenberg WHERE text_id = 123457' },
  { name: 'filtered scan', format: 'json', sql: "SELECT count(*) AS n FROM gutenberg WHERE title LIKE '%99%' AND language = 'en'" },
  { name: 'GROUP BY', format: 'json', sql: 'SELECT authors, count(*) AS n, avg(text_id) AS mean FROM gutenberg GROUP BY authors ORDER BY n DESC' },
  { name: '1,000-row JSON', format: 'json', sql: 'SELECT * FROM gutenberg WHERE text_id % 5 = 0' },
  { name: 'Parquet result', format: 'parquet', sql: 'SELECT * FROM gutenberg WHERE text_id % 5 = 0' },
] as const;

async function buildBenchDb(path: string): Promise<void> {
  const instance = await DuckDBInstance.create(path);
  const c = await instance.connect();
  await c.run(`CREATE TABLE gutenberg AS SELECT range AS text_id, 'Text' AS type, DATE '1990-01-01' + (range % 10000)::INT AS issued,
    'Book number ' || range AS title, CASE WHEN range % 3 = 0 THEN 'fr' ELSE 'en' END AS language, 'Author ' || (range % 997) AS authors
    FROM range(${ROWS}) ORDER BY text_id`);
  c.closeSync();
  instance.closeSync();
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

async function measure(concurrency: number, once: () => Promise<void>): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  let left = ITERATIONS;
  const worker = async () => {
    while (left-- > 0) {
      const start = performance.now();
      await once();
      times.push(performance.now() - start);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'uda-bench-runner-'));
  const dbPath = join(dir, 'service.db');
  process.stdout.write(`building bench database (${ROWS.toLocaleString('en-US')} rows)…\n`);
  await buildBenchDb(dbPath);
  const dataDir = join(dir, 'data');
  await publishDatabase(new LocalFolderStore(join(dataDir, 'objects')), dbPath);
  const runner = await startChild({ DATA_DIR: dataDir, RUNNER_PORT: '0', LOG_LEVEL: 'warn', DUCKDB_THREADS: THREADS, MAX_CONCURRENT_QUERIES: '8', ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}) });
  await waitReady(runner.url, 120_000);
  const direct = await DuckDBInstance.create(dbPath, { access_mode: 'READ_ONLY', threads: THREADS });
  const rows: string[][] = [];
  try {
    for (const q of QUERIES) {
      for (const concurrency of [1, 8]) {
        const viaRunner = await measure(concurrency, async () => {
          const res = await postQuery(runner.url, { queryId: randomUUID(), sql: q.sql, format: q.format });
          if (res.status !== 200) throw new Error(`${q.name}: ${JSON.stringify(res.body)}`);
        });
        const inProcess = await measure(concurrency, async () => {
          const c = await direct.connect();
          // The SQL as the runner executes it: the same row cap and probe row.
          (await c.runAndReadAll(capRows(q.sql, 1001))).getRowObjectsJson();
          c.closeSync();
        });
        rows.push([q.name, String(concurrency), fmt(inProcess.p50), fmt(inProcess.p99), fmt(viaRunner.p50), fmt(viaRunner.p99),
          (viaRunner.p50 / inProcess.p50).toFixed(2), fmt(viaRunner.p50 - inProcess.p50)]);
      }
    }
  } finally {
    direct.closeSync();
    runner.child.kill('SIGTERM');
    await runner.exited;
  }
  printTable(['query', 'conc', 'duckdb p50', 'duckdb p99', 'runner p50', 'runner p99', 'ratio p50', 'overhead p50'], rows);
  try {
    printTable(['isolation', 'p50 ms', 'p99 ms'], await isolationFigures(dbPath, join(dir, 'isolation')));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  process.stdout.write(`\ncommand: npm run bench:runner (BENCH_ROWS=${ROWS}, BENCH_ITERATIONS=${ITERATIONS}, DUCKDB_THREADS=${THREADS}); times in ms\n`);
}

const fmt = (ms: number) => ms.toFixed(1);
const fmt3 = (ms: number) => ms.toFixed(3);

/**
 * What isolation adds at the point lookup: the allow-list walk over the parsed tree, the whole
 * validation (parse + walk), and the hand-off to a worker process (pool run minus the same execute
 * and Parquet write in-process); and the time from a deadline kill to a fresh worker ready.
 */
async function isolationFigures(dbPath: string, dir: string): Promise<string[][]> {
  const point = QUERIES[0].sql;
  const sandboxLimits = { memoryLimit: '1GB', threads: Number(THREADS), maxTempSize: '1GB', tempDirectory: join(dir, 'tmp') };
  const limits = { maxRows: 1000, timeoutMs: 30_000, maxBytes: 64 * 1024 * 1024, maxCellBytes: 32 * 1024 };
  const parser = await createSqlParser();
  const parsed = await parser.parse(point);
  if (parsed.kind !== 'parsed') throw new Error('the point lookup does not parse');
  const allowList = await measure(1, () => Promise.resolve(void refusedReference(parsed.references, parser.engineRelations)));
  const validation = await measure(1, async () => void (await validateSql(point, parser)));
  parser.close();

  const instance = await openSandbox(dbPath, sandboxLimits);
  const writer = await createResultWriter();
  await mkdir(dir, { recursive: true });
  const inProcess = await measure(1, async () => {
    const connection = await instance.connect();
    const execution = await execute(connection, point, limits);
    connection.closeSync();
    await writer.writeParquet(execution.columns, execution.chunks, limits.maxRows, join(dir, 'direct.parquet'));
  });
  instance.closeSync();
  writer.close();
  const logger = createLogger({ name: 'bench', level: 'silent' });
  const pool = createQueryPool({ size: 1, sandboxLimits, maxRssBytes: 4 * 1024 ** 3, killGraceMs: 100, rssPollMs: 100, logger });
  const task = { sql: point, dbPath, sheets: [], limits, parquetPath: join(dir, 'worker.parquet') };
  await pool.run(task);
  const viaWorker = await measure(1, async () => void (await pool.run(task)));
  const respawns: number[] = [];
  for (let i = 0; i < 5; i++) {
    const runaway = { ...task, sql: "SELECT levenshtein(repeat('a', 60000), repeat('b', 60000)) AS d", limits: { ...limits, timeoutMs: 200 } };
    await pool.run(runaway).catch(() => undefined);
    const killed = performance.now();
    await pool.warm();
    respawns.push(performance.now() - killed);
  }
  await pool.close();
  respawns.sort((a, b) => a - b);
  return [
    ['allow-list walk (point lookup)', fmt3(allowList.p50), fmt3(allowList.p99)],
    ['validation: parse + allow-list', fmt3(validation.p50), fmt3(validation.p99)],
    ['execute + Parquet in-process', fmt3(inProcess.p50), fmt3(inProcess.p99)],
    ['execute + Parquet via worker', fmt3(viaWorker.p50), fmt3(viaWorker.p99)],
    ['worker hand-off (difference)', fmt3(viaWorker.p50 - inProcess.p50), fmt3(viaWorker.p99 - inProcess.p99)],
    ['deadline kill -> fresh worker ready', fmt(percentile(respawns, 50)), fmt(percentile(respawns, 99))],
  ];
}

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  process.stdout.write(`\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n${rows.map(line).join('\n')}\n`);
}

await main();
