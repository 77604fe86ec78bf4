/**
 * `npm run bench:lookup -- --scales 0.01,0.1,1`: the scaling curve of uncached stored lookups. For
 * each scale, the generator writes full-size inputs (`npm run data:generate`), the real exporter CLI
 * builds `service.db` with its search index from them, and autocannon drives the runner's own
 * `POST /v1/lookups` (the path of every lookup the API's short cache has not seen) with a mix of
 * queries over every stored source, rare and common words alike, then with each kind of query
 * alone (exact spelling, plurals, typos, split or joined words). Prints req/s, p50, p99, the mean
 * `total` and the runner's CPU time per request (all its threads, from Linux's /proc: unlike req/s
 * it holds up on a shared machine) per scale, overall and per kind, and the search index's memory as the runner logged it
 * when it loaded the version: the goal is latency that follows the matches, not the table.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { RUNNER_AUTH, TEST_RUNNER_TOKEN } from '@uda/test-support/runner-harness';
import { TEST_REDIS_URL, uniquePrefix } from '@uda/test-support/api-harness';
import { runNode, startNode, stopNode } from '../test/support/spawn.ts';

const ROOT = join(import.meta.dirname, '..', '..');

/** Per kind of query: exact titles, rare words and common words, so each covers short and long posting lists. */
const KINDS = {
  exact: [
    ['gutenberg', 'the art of war'], ['gutenberg', 'war'], ['gutenberg', 'sleepy hollow'], ['gutenberg', 'history'],
    ['census', 'york'], ['census', 'doña ana'], ['census', 'county'],
    ['food', 'butter'], ['food', 'cheese raw'], ['food', 'chicken breast'], ['food', 'babyfood'],
    ['pwc', 'attention'], ['pwc', 'image segmentation'], ['pwc', 'learning'],
    ['sec', 'tsla'], ['sec', 'bank'], ['sec', 'royal gold'],
  ],
  plural: [
    ['gutenberg', 'wars'], ['gutenberg', 'histories'], ['food', 'eggs'], ['food', 'strawberry'], ['food', 'apple raw'],
    ['census', 'counties'], ['pwc', 'network'], ['pwc', 'images segmentations'], ['sec', 'banks'],
  ],
  typo: [
    ['gutenberg', 'frankenstien'], ['gutenberg', 'histroy'], ['food', 'chiken breast'], ['food', 'brocoli'],
    ['census', 'californa'], ['pwc', 'atention'], ['pwc', 'segmantaton'], ['sec', 'microsfot'], ['sec', 'berkshre hathway'],
  ],
  split: [
    ['gutenberg', 'mobydick'], ['gutenberg', 'flat land'], ['food', 'peanutbutter'], ['census', 'losangeles'],
    ['pwc', 'fewshot'], ['pwc', 'unet'], ['sec', 'jp morgan'], ['sec', 'cocacola'], ['sec', 'wal mart'],
  ],
} as const satisfies Record<string, readonly (readonly [string, string])[]>;

const MIX = Object.values(KINDS).flat();

interface Measured {
  rps: number;
  p50: number;
  p99: number;
  meanTotal: number;
  non2xx: number;
  /** The runner's CPU time (every thread) per request: unlike req/s, it holds up on a shared machine. */
  cpuMsPerRequest: number;
}

/** A process's CPU time in ms (user and system, every thread), from Linux's /proc; NaN elsewhere. */
function cpuMsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime, in clock ticks of 10 ms.
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

interface Point extends Measured {
  scale: number;
  rows: number;
  exportSeconds: number;
  kinds: Record<string, Measured>;
  /** The mix again on a runner with its page cache on (the rows above are uncached). */
  cached: Measured;
  /** From the runner's `search index loaded` line: megabytes per source, and its RSS then. */
  indexMegabytes: number;
  rssMegabytes: number;
}

/** req/s, p50, p99, the mean total and the runner's (`pid`) CPU per request of one mix of queries, after a short warm-up. */
async function measureMix(url: string, pid: number, mix: readonly (readonly [string, string])[], duration: number, connections: number): Promise<Measured> {
  let totals = 0;
  for (const [source, keywords] of mix) {
    const res = await fetch(`${url}/v1/lookups`, { method: 'POST', headers: { 'content-type': 'application/json', ...RUNNER_AUTH }, body: JSON.stringify({ source, keywords, limit: 10 }) });
    totals += res.ok ? ((await res.json()) as { total: number }).total : 0;
  }
  const requests = mix.map(([source, keywords]) => ({ method: 'POST' as const, path: '/v1/lookups', headers: { 'content-type': 'application/json', ...RUNNER_AUTH }, body: JSON.stringify({ source, keywords, limit: 10 }) }));
  await autocannon({ url, connections, duration: 2, requests });
  const cpuBefore = cpuMsOf(pid);
  const r = await autocannon({ url, connections, duration, requests });
  const cpuMsPerRequest = (cpuMsOf(pid) - cpuBefore) / Math.max(1, r.requests.total);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, meanTotal: Math.round(totals / mix.length), non2xx: r.non2xx, cpuMsPerRequest };
}

/** The index's megabytes (all sources) and the RSS from the runner's `search index loaded` log line. */
function indexMemory(lines: readonly string[]): { indexMegabytes: number; rssMegabytes: number } {
  const line = lines.find((l) => l.includes('search index loaded'));
  if (!line) return { indexMegabytes: 0, rssMegabytes: 0 };
  const logged = JSON.parse(line) as { sources: Record<string, { megabytes: number }>; rssMegabytes: number };
  return { indexMegabytes: Object.values(logged.sources).reduce((sum, s) => sum + s.megabytes, 0), rssMegabytes: logged.rssMegabytes };
}

/** Waits for the runner's /readyz; measuring a runner that is not ready would time only its 503s. */
async function untilReady(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fetch(`${url}/readyz`).catch(() => undefined))?.ok) {
    if (Date.now() > deadline) throw new Error(`the runner at ${url} was not ready after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Generates inputs of `scale` into `dir` and exports them there: the rows exported and the seconds it took. */
async function generateAndExport(scale: number, dir: string): Promise<{ rows: number; exportSeconds: number }> {
  const input = join(dir, 'input');
  await runNode(join(ROOT, 'exporter/bench/generate-data.ts'), ['--scale', String(scale), '--out', input]);
  const started = performance.now();
  const log = await runNode(join(ROOT, 'exporter/src/main.ts'), [], { DATA_DIR: dir, EXPORT_INPUT_DIR: input, LOG_LEVEL: 'info', EXPORT_DUCKDB_MEMORY_LIMIT: '2GB' });
  const published = log.split('\n').find((l) => l.includes('export published'));
  const rows = published ? Number((JSON.parse(published) as { rows: number }).rows) : 0;
  return { rows, exportSeconds: (performance.now() - started) / 1000 };
}

type Runner = Awaited<ReturnType<typeof startNode>>;

/** A runner over the DATA_DIR `dir`, ready; `cacheBytes` its page cache (0: off). */
async function startRunner(dir: string, cacheBytes: number): Promise<{ runner: Runner; url: string }> {
  const runner = await startNode(join(ROOT, 'query-runner/src/main.ts'), {
    DATA_DIR: dir, REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: uniquePrefix(), RUNNER_PORT: '0', MANIFEST_POLL_MS: '100', LOG_LEVEL: 'info', RUNNER_TOKEN: TEST_RUNNER_TOKEN,
    LOOKUP_CACHE_BYTES: String(cacheBytes),
  }, (l) => l.includes('"event":"listening"'));
  const url = (JSON.parse(runner.line) as { url: string }).url;
  // A runner opens a version only once its search index and page store are loaded.
  await untilReady(url, 600_000);
  return { runner, url };
}

/** With `data`, measures the export already published in that DATA_DIR (kept afterwards) instead of building one. */
async function measureScale(scale: number, duration: number, connections: number, data?: string): Promise<Point> {
  const dir = data ?? (await mkdtemp(join(tmpdir(), `uda-lookup-scale-${scale}-`)));
  let runner: Runner | undefined;
  try {
    const { rows, exportSeconds } = data ? { rows: 0, exportSeconds: 0 } : await generateAndExport(scale, dir);
    // Uncached: the page cache off, so every request is ranked.
    const uncached = await startRunner(dir, 0);
    runner = uncached.runner;
    const overall = await measureMix(uncached.url, runner.child.pid!, MIX, duration, connections);
    const kinds: Record<string, Measured> = {};
    for (const [kind, mix] of Object.entries(KINDS)) kinds[kind] = await measureMix(uncached.url, runner.child.pid!, mix, duration, connections);
    const memory = indexMemory(runner.lines);
    await stopNode(runner.child);
    const cachedRunner = await startRunner(dir, 64 << 20);
    runner = cachedRunner.runner;
    const cached = await measureMix(cachedRunner.url, runner.child.pid!, MIX, duration, connections);
    return { scale, rows, exportSeconds, ...overall, kinds, cached, ...memory };
  } finally {
    if (runner) await stopNode(runner.child);
    if (!data) await rm(dir, { recursive: true, force: true });
  }
}

export async function lookupScalingCurve(scales: readonly number[], duration: number, connections: number, data?: string): Promise<void> {
  if (data && scales.length !== 1) throw new Error('--data measures one export: give one scale');
  const points: Point[] = [];
  for (const scale of scales) points.push(await measureScale(scale, duration, connections, data));
  console.log(`\nUncached stored lookups (runner POST /v1/lookups), autocannon ${connections} connections, ${duration} s, ${MIX.length}-query mix, then each kind alone`);
  console.log('scale   kind     rows        export s   req/s   p50 ms  p99 ms  mean total  non-2xx  index MB  RSS MB  CPU ms/req');
  const row = (p: Point, kind: string, m: Measured) =>
    `${String(p.scale).padEnd(7)} ${kind.padEnd(7)} ${String(p.rows).padStart(10)} ${p.exportSeconds.toFixed(0).padStart(9)} ${m.rps.toFixed(0).padStart(7)}  ${String(m.p50).padStart(6)}  ${String(m.p99).padStart(6)}  ${String(m.meanTotal).padStart(10)}  ${String(m.non2xx).padStart(7)}  ${String(p.indexMegabytes).padStart(8)}  ${String(p.rssMegabytes).padStart(6)}  ${m.cpuMsPerRequest.toFixed(3).padStart(10)}`;
  for (const p of points) {
    console.log(row(p, 'all', p));
    for (const [kind, m] of Object.entries(p.kinds)) console.log(row(p, kind, m));
    console.log(row(p, 'cached', p.cached));
  }
  console.log(`Rows "all" and per kind: the page cache off (LOOKUP_CACHE_BYTES=0); "cached": the ${MIX.length}-query mix with it on. Load average at the end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log('Goal at scale 1: ≥ 2,000 req/s per runner, p99 < 50 ms at 50 connections; index ≤ 600 MiB.');
  console.log(`Command: npm run bench:lookup -- --scales ${scales.join(',')}${data ? ` --data ${data}` : ''}   (BENCH_DURATION_S, BENCH_CONNECTIONS)`);
  if (data) console.log('rows and export s are 0: the export was built beforehand, not by this run.');
}
