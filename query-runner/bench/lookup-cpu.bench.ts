/**
 * `node query-runner/bench/lookup-cpu.bench.ts SERVICE_DB`: the CPU time of one stored lookup, run
 * serially through the runner's own path (`LookupConnections`, prepared statements) on a built
 * `service.db` (e.g. one that `npm run bench:lookup -- --scales N --data DIR` measured). CPU time,
 * unlike req/s, holds up on a shared machine: it says what one core can serve, `1000 / cpu ms`
 * lookups per second, before HTTP. Env: BENCH_ITERATIONS (default 10), DUCKDB_THREADS (default 1).
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { LookupConnections } from '../src/lookups/lookup-connections.ts';
import { storedLookupQuery, type StoredLookupSource } from '../src/lookups/stored-sql.ts';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 10);
const THREADS = process.env.DUCKDB_THREADS ?? '1';

/** Exact titles, rare and common words: short and long posting lists. */
const QUERIES: readonly [StoredLookupSource, string][] = [
  ['gutenberg', 'the art of war'], ['gutenberg', 'war'], ['gutenberg', 'history'],
  ['census', 'doña ana'], ['census', 'county'],
  ['food', 'butter'], ['food', 'cheese raw'], ['food', 'babyfood'],
  ['pwc', 'attention'], ['pwc', 'learning'],
  ['sec', 'tsla'], ['sec', 'bank'],
];

const path = process.argv[2];
if (!path) throw new Error('usage: node query-runner/bench/lookup-cpu.bench.ts SERVICE_DB');
const instance = await DuckDBInstance.create(path, { access_mode: 'READ_ONLY', threads: THREADS });
const pool = new LookupConnections(instance);

console.log(`CPU per stored lookup, serial, prepared, DuckDB threads ${THREADS}, ${ITERATIONS} runs each: ${path}`);
console.log('source     keywords          total   cpu ms  wall ms');
let cpuSum = 0;
for (const [source, keywords] of QUERIES) {
  const query = storedLookupQuery(source, keywords, 10)!;
  const run = () => pool.use((session) => session.rows(query.sql, query.params));
  const [first] = await run(); // prepares the statement, warms the file's pages
  const cpuStart = process.cpuUsage();
  const wallStart = performance.now();
  for (let i = 0; i < ITERATIONS; i++) await run();
  const cpu = process.cpuUsage(cpuStart);
  const cpuMs = (cpu.user + cpu.system) / 1000 / ITERATIONS;
  cpuSum += cpuMs;
  const wallMs = (performance.now() - wallStart) / ITERATIONS;
  console.log(`${source.padEnd(10)} ${keywords.padEnd(16)} ${String(first?.total ?? 0).padStart(6)}  ${cpuMs.toFixed(1).padStart(7)}  ${wallMs.toFixed(1).padStart(7)}`);
}
const mean = cpuSum / QUERIES.length;
console.log(`mean ${mean.toFixed(1)} ms CPU per lookup: at most ${(1000 / mean).toFixed(0)} lookups/s per core before HTTP.`);
console.log(`Command: node query-runner/bench/lookup-cpu.bench.ts ${path}   (BENCH_ITERATIONS, DUCKDB_THREADS)`);
pool.close();
instance.closeSync();
