/**
 * `npm run bench:lookup`: requests per second and p99 at 50 connections on loopback, real
 * PostgreSQL and Redis, one API process plus one query-runner process, for
 *   1. stored-source lookups (one per stored source, in turn), anonymous;
 *   2. the same, paid with a key (a real charge per request, 50 accounts);
 *   3. a live lookup (Wikipedia search) against a local fake answering in 50 ms: identical concurrent
 *      lookups share one upstream call, and the etiquette (one Wikipedia call per 100 ms) bounds them;
 *   4. the same live lookup served from the fresh cache (stored copies in PostgreSQL);
 *   5. for reference, the runner's own POST /v1/lookups, the path of a stored lookup the API's
 *      short cache has not seen (one DuckDB query each).
 * With `-- --scales 0.01,0.1,1`, instead: the runner's uncached lookups over generated inputs of
 * each scale (`lookup-scaling.ts`); with `--scales N --data DIR`, over the export already published in
 * the DATA_DIR `DIR`, built from inputs of scale N (no generating or exporting).
 * Env: BENCH_DATABASE_URL, BENCH_REDIS_URL, BENCH_DURATION_S (default 10), BENCH_CONNECTIONS (50).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { onServer } from './support.ts';
import { startFakeWikipedia } from '../test/fakes/wikipedia.ts';
import { RUNNER_AUTH } from '@uda/test-support/runner-harness';
import { startStoredRunner } from '../test/support/stored-runner.ts';
import { lookupScalingCurve } from './lookup-scaling.ts';

const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const duration = Number(process.env.BENCH_DURATION_S ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);

const LIVE_PATH = '/wiki/counter%20strike';
const STORED = [
  ['gutenberg', 'the art of war'],
  ['census', 'york'],
  ['food', 'butter'],
  ['pwc', 'attention'],
  ['sec', 'tsla'],
] as const;
const STORED_PATHS = STORED.map(([source, keywords]) => `/${source}/${encodeURIComponent(keywords)}`);
const RUNNER_BODIES = STORED.map(([source, keywords]) => JSON.stringify({ source, keywords, limit: 10 }));

interface Result {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}


async function measure(name: string, url: string, requests: autocannon.Request[]): Promise<Result> {
  // A short warm-up so JIT, pools, DuckDB and Redis scripts are hot before measuring.
  await autocannon({ url, connections, duration: 2, requests });
  const r = await autocannon({ url, connections, duration, requests });
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors };
}

// `-- --scales 0.01,0.1,1`: only the runner's scaling curve over generated full-size inputs.
const scalesArg = process.argv.indexOf('--scales');
if (scalesArg > 0) {
  const dataArg = process.argv.indexOf('--data');
  const data = dataArg > 0 ? process.argv[dataArg + 1] : undefined;
  await lookupScalingCurve(process.argv[scalesArg + 1]!.split(',').map(Number), duration, connections, data);
  process.exit(0);
}

const dbName = `uda_bench_${randomBytes(4).toString('hex')}`;
await onServer(adminUrl, `CREATE DATABASE ${dbName}`);
const dbUrl = new URL(adminUrl);
dbUrl.pathname = `/${dbName}`;
const wiki = await startFakeWikipedia();
wiki.delayMs = 50;
const runner = await startStoredRunner({ REDIS_URL: redisUrl });
const child = spawn(join(process.cwd(), 'node_modules/.bin/node'), [join(import.meta.dirname, 'lookup-server.ts'), dbUrl.toString(), redisUrl, runner.url, wiki.url], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
try {
  const info = await new Promise<{ live: string; cached: string; keys: string[] }>((resolve, reject) => {
    child.stdout.once('data', (chunk: Buffer) => resolve(JSON.parse(chunk.toString().split('\n')[0] ?? '{}')));
    child.once('exit', (code) => reject(new Error(`bench server exited ${code}`)));
  });
  const paid = info.keys.map((key, i) => ({ method: 'GET' as const, path: STORED_PATHS[i % STORED_PATHS.length], headers: { authorization: `Bearer ${key}` } }));
  const results = [
    await measure('stored, anonymous', info.live, STORED_PATHS.map((path) => ({ method: 'GET', path }))),
    await measure('stored, paid (charge/request)', info.live, paid),
    await measure('live wiki, fake 50 ms', info.live, [{ method: 'GET', path: LIVE_PATH }]),
    await measure('live wiki, fresh cache', info.cached, [{ method: 'GET', path: LIVE_PATH }]),
    await measure('runner /v1/lookups (miss)', runner.url, RUNNER_BODIES.map((body) => ({ method: 'POST', path: '/v1/lookups', headers: { 'content-type': 'application/json', ...RUNNER_AUTH }, body }))),
  ];
  const upstreamCalls = wiki.requests.length;
  console.log(`\nautocannon, ${connections} connections, ${duration} s each, loopback; API and runner in their own processes`);
  console.log('variant                          req/s   p50 ms  p99 ms  non-2xx  errors');
  for (const r of results) {
    console.log(`${r.name.padEnd(30)} ${r.rps.toFixed(0).padStart(7)}  ${String(r.p50).padStart(6)}  ${String(r.p99).padStart(6)}  ${String(r.non2xx).padStart(7)}  ${String(r.errors).padStart(6)}`);
  }
  console.log(`\nWikipedia fake calls over the whole run: ${upstreamCalls} (coalescing, etiquette of 1 call per 100 ms, then the fresh cache)`);
  console.log('Goal: stored-source lookups ≥ 1,500 req/s with p99 < 50 ms at 50 connections.');
  console.log('Command: npm run bench:lookup   (BENCH_DURATION_S, BENCH_CONNECTIONS, BENCH_DATABASE_URL, BENCH_REDIS_URL)');
} finally {
  await new Promise((resolve) => {
    child.once('exit', resolve);
    child.kill('SIGTERM');
  });
  await runner.close();
  await wiki.close();
  await onServer(adminUrl, `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
}
