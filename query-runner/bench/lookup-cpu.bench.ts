/**
 * `node query-runner/bench/lookup-cpu.bench.ts SERVICE_DB`: the CPU time of one stored lookup, run
 * serially through the runner's own path (`lookupOn`: the in-memory index's ranking, then the
 * page's rows from the page store) on a built `service.db` (e.g. one that
 * `npm run bench:lookup -- --scales N --data DIR` measured). CPU time, unlike req/s, holds up on a
 * shared machine: it says what one core can serve, `1000 / cpu ms` lookups per second, before HTTP.
 * Also prints what loading the index took: seconds, bytes per source, and the process's RSS.
 * Env: BENCH_ITERATIONS (default 10), DUCKDB_THREADS (default 1).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { OpenDatabase } from '../src/database-manager.ts';
import { lookupOn } from '../src/lookups/run-lookup.ts';
import { rankDocuments } from '@uda/search/rank';
import { parseQuery } from '@uda/search/query';
import { indexBytes, type SourceIndex } from '@uda/search/index';
import { loadSearchIndexes } from '../src/lookups/search-index.ts';
import { LOOKUP_CPU_QUERIES } from './lookup-cpu.queries.ts';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 10);
const THREADS = process.env.DUCKDB_THREADS ?? '1';
const TIMEOUT_MS = 30_000;

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;

const path = process.argv[2];
if (!path) throw new Error('usage: node query-runner/bench/lookup-cpu.bench.ts SERVICE_DB');
const instance = await DuckDBInstance.create(path, { access_mode: 'READ_ONLY', threads: THREADS });
const database: OpenDatabase = { version: 'bench', path, instance, leases: 0, retired: false, resources: new Map() };

const rssBefore = process.memoryUsage().rss;
const loadStarted = performance.now();
const reader = await DuckDBInstance.create(path, { access_mode: 'READ_ONLY', threads: THREADS });
const pagesDir = await mkdtemp(join(tmpdir(), 'uda-lookup-cpu-'));
const indexes = await loadSearchIndexes(database, reader, pagesDir);
reader.closeSync();
const loadSeconds = (performance.now() - loadStarted) / 1000;
global.gc?.();
console.log(`In-memory index loaded and page store written in ${loadSeconds.toFixed(1)} s; RSS ${mb(rssBefore)} before, ${mb(process.memoryUsage().rss)} after`);
for (const source of new Set(LOOKUP_CPU_QUERIES.map(([s]) => s))) {
  const index = indexes.get(source)!;
  console.log(`  ${source.padEnd(10)} ${String(index.postingDocs.length).padStart(10)} postings  ${String(index.titleDocs.length).padStart(8)} titles  ${mb(indexBytes(index)).padStart(7)}`);
}

console.log(`\nCPU per stored lookup, serial, DuckDB threads ${THREADS}, ${ITERATIONS} runs each: ${path}`);
console.log('source     keywords                total   cpu ms  rank ms  page ms  wall ms');
/** The CPU of the in-memory ranking alone; the rest of a lookup is reading the page's rows. */
function rankCpuMs(index: SourceIndex, keywords: string): number {
  const started = process.cpuUsage();
  for (let i = 0; i < ITERATIONS; i++) rankDocuments(index, parseQuery(keywords), 10, () => undefined);
  const cpu = process.cpuUsage(started);
  return (cpu.user + cpu.system) / 1000 / ITERATIONS;
}

let cpuSum = 0;
let rankSum = 0;
let rankMax = 0;
for (const [source, keywords] of LOOKUP_CPU_QUERIES) {
  const run = () => lookupOn(database, { source, keywords, limit: 10 }, TIMEOUT_MS);
  const first = await run(); // prepares the statement, warms the file's pages
  const cpuStart = process.cpuUsage();
  const wallStart = performance.now();
  for (let i = 0; i < ITERATIONS; i++) await run();
  const cpu = process.cpuUsage(cpuStart);
  const cpuMs = (cpu.user + cpu.system) / 1000 / ITERATIONS;
  cpuSum += cpuMs;
  const wallMs = (performance.now() - wallStart) / ITERATIONS;
  const rankMs = rankCpuMs(indexes.get(source)!, keywords);
  rankSum += rankMs;
  rankMax = Math.max(rankMax, rankMs);
  console.log(`${source.padEnd(10)} ${keywords.padEnd(22)} ${String((JSON.parse(first.toString('utf8')) as { total: number }).total).padStart(6)}  ${cpuMs.toFixed(2).padStart(7)}  ${rankMs.toFixed(2).padStart(7)}  ${(cpuMs - rankMs).toFixed(2).padStart(7)}  ${wallMs.toFixed(2).padStart(7)}`);
}
const mean = cpuSum / LOOKUP_CPU_QUERIES.length;
console.log(`mean ${mean.toFixed(2)} ms CPU per lookup (ranking ${(rankSum / LOOKUP_CPU_QUERIES.length).toFixed(2)} ms, page ${((cpuSum - rankSum) / LOOKUP_CPU_QUERIES.length).toFixed(2)} ms): at most ${(1000 / mean).toFixed(0)} lookups/s per core before HTTP; the costliest ranking ${rankMax.toFixed(2)} ms.`);
console.log(`Command: node query-runner/bench/lookup-cpu.bench.ts ${path}   (BENCH_ITERATIONS, DUCKDB_THREADS)`);
indexes.close();
instance.closeSync();
await rm(pagesDir, { recursive: true, force: true });
