/**
 * `npm run bench:sql`, in one run:
 *   1. `POST /api/v1/query` end to end against calling the runner directly, for the runner
 *      benchmark's queries (the API's overhead ratio; goal ≤ 10% for queries over 50 ms);
 *   2. a 200 MB export download through the API against a direct GET of the same object from the
 *      S3-compatible server: a new export version is published while the API runs, the API's
 *      warm-up copies it into its disk cache (its MB/s and CPU ms per MB), then the first download
 *      of the new version on the pod (goal ≥ 90% of direct) and a repeat download (goal ≥ 100%),
 *      each with the API's CPU ms per MB; medians over three publishes; and the API's peak RSS.
 * Beside each query row: the API's CPU µs per request and its Redis round trips per request (a
 * counting proxy in front of the API's Redis; the batches its billing timers send meanwhile, about
 * 4 a second, are counted too, so a slow row carries a share of them).
 * Every process is separate: s3rver, one runner, the API, and this client.
 * Env: BENCH_ROWS (2,000,000), BENCH_ITERATIONS (20), BENCH_EXPORT_MB (200, or a list such as
 * `50,200` to compare peak RSS across sizes), BENCH_PARTS (`queries,export`), BENCH_CPU_PROF (a
 * folder: the API and the runner write `--cpu-prof` profiles there when the run ends), BENCH_PHASES
 * (any value: the API prints, on exit, the mean wall time of each service call it made),
 * BENCH_OBJECT_CACHE_MB (the API's OBJECT_CACHE_MAX_MB; 0 serves every download from S3, the
 * baseline without the cache), BENCH_WARM (0: no warm-up, the first download streams from S3 while
 * it fills the cache), BENCH_DATABASE_URL, BENCH_REDIS_URL, S3_ENDPOINT/S3_ACCESS_KEY_ID/S3_SECRET_ACCESS_KEY (an
 * external S3 instead of s3rver).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { MANIFEST_KEY, newVersion, versionManifestKey, versionPrefix } from '@uda/shared/manifest';
import { S3Store } from '@uda/shared/object-store';
import { RESULT_ENVELOPE_TYPE } from '@uda/shared/runner-contract';
import { RUNNER_AUTH, TEST_RUNNER_TOKEN, startChild, waitReady } from '@uda/test-support/runner-harness';
import { type CountingRedisProxy, countingRedisProxy } from '@uda/test-support/redis-proxy';
import { entryName } from '../src/objects/object-cache.ts';
import { Manifests } from '../src/sql/export-version.ts';
import { type BenchBlob, BLOB_NAMES, benchDatabase, bigFile, createBenchDatabase, publish, spawnJson } from './sql-fixtures.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 2_000_000);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 20);
const EXPORT_SIZES_MB = (process.env.BENCH_EXPORT_MB ?? '200').split(',').map(Number);
const PARTS = new Set((process.env.BENCH_PARTS ?? 'queries,export').split(','));
const CPU_PROF = process.env.BENCH_CPU_PROF;
const OBJECT_CACHE_MB = process.env.BENCH_OBJECT_CACHE_MB ?? '1024';
const WARM = process.env.BENCH_WARM !== '0' && OBJECT_CACHE_MB !== '0';
/** New export versions the export part publishes; each gives one first download. */
const PUBLISHES = 3;
const PROFILE_ARGS = CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : [];
const NODE = join(process.cwd(), 'node_modules/.bin/node');

const QUERIES = [
  { name: 'point lookup', sql: 'SELECT * FROM gutenberg WHERE text_id = 123457' },
  { name: 'filtered scan', sql: "SELECT count(*) AS n FROM gutenberg WHERE title LIKE '%99%' AND language = 'en'" },
  { name: 'GROUP BY', sql: 'SELECT authors, count(*) AS n, avg(text_id) AS mean FROM gutenberg GROUP BY authors ORDER BY n DESC' },
  { name: '1,000-row JSON', sql: 'SELECT * FROM gutenberg WHERE text_id % 5 = 0' },
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

function httpDrain(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { headers }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`${url}: ${res.statusCode}`));
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.once('end', () => resolve(bytes));
      res.once('error', reject);
    }).once('error', reject);
  });
}

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(field));
  return Number(line?.split(/\s+/)[1] ?? NaN);
}

/** CPU time (user + system) the process has used, in ms: a figure the machine's load barely moves. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
}
const CLOCK_TICKS_PER_S = 100;

const log = (text: string) => process.stderr.write(`${text}\n`);

/** Samples the process's resident set while `work` runs; its peak in MB. */
async function peakRssDuring(pid: number, work: () => Promise<void>): Promise<number> {
  let peak = statusKb(pid, 'VmRSS');
  const timer = setInterval(() => (peak = Math.max(peak, statusKb(pid, 'VmRSS'))), 20);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return Math.max(peak, statusKb(pid, 'VmRSS')) / 1024;
}

/** Ends a child so that `--cpu-prof` writes its profile (it does on exit, not on SIGKILL). */
async function stop(child: ChildProcess): Promise<void> {
  if (!(CPU_PROF || process.env.BENCH_PHASES) || child.exitCode !== null) return void child.kill('SIGKILL');
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
  child.kill('SIGKILL');
}

async function main(): Promise<void> {
  const s3 = process.env.S3_ENDPOINT
    ? { endpoint: process.env.S3_ENDPOINT, child: undefined }
    : await spawnJson<{ endpoint: string }>(NODE, [join(import.meta.dirname, 's3-server.ts')]).then((r) => ({ endpoint: r.info.endpoint, child: r.child }));
  const s3Env = {
    S3_ENDPOINT: s3.endpoint,
    S3_BUCKET: `uda-bench-${randomUUID().slice(0, 8)}`,
    S3_ACCESS_KEY_ID: process.env.S3_ACCESS_KEY_ID ?? 'S3RVER',
    S3_SECRET_ACCESS_KEY: process.env.S3_SECRET_ACCESS_KEY ?? 'S3RVER',
    S3_REGION: 'us-east-1',
    S3_FORCE_PATH_STYLE: 'true',
  };
  const credentials = { accessKeyId: s3Env.S3_ACCESS_KEY_ID, secretAccessKey: s3Env.S3_SECRET_ACCESS_KEY };
  await new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials }).send(new CreateBucketCommand({ Bucket: s3Env.S3_BUCKET }));
  const store = new S3Store({ bucket: s3Env.S3_BUCKET, region: 'us-east-1', endpoint: s3.endpoint, ...credentials, forcePathStyle: true, partSizeBytes: 16 * 1024 * 1024 });
  const sizes = PARTS.has('export') ? EXPORT_SIZES_MB.slice(0, BLOB_NAMES.length) : [];
  log(`building the bench database (${ROWS} rows) and export files of ${sizes.join(', ') || 'no'} MB…`);
  const work = await createBenchDatabase(ROWS);
  const blobs: BenchBlob[] = [];
  for (const [i, megabytes] of sizes.entries()) blobs.push(await bigFile(work.dir, megabytes, BLOB_NAMES[i]!));
  await publish(store, work.dbPath, blobs);
  log('starting the runner and the API…');
  const profileEnv: Record<string, string> = CPU_PROF ? { NODE_OPTIONS: PROFILE_ARGS.join(' ') } : {};
  const runner = await startChild({ ...s3Env, ...profileEnv, DATA_DIR: join(work.dir, 'runner'), RUNNER_PORT: '0', LOG_LEVEL: 'warn', MANIFEST_POLL_MS: '500' });
  log(`runner at ${runner.url}`);
  await waitReady(runner.url, 120_000);
  log('runner ready');
  const database = await benchDatabase();
  const redis = await countingRedisProxy(database.redisUrl);
  const api = await spawnJson<{ url: string; apiKey: string }>(NODE, [
    ...PROFILE_ARGS,
    join(import.meta.dirname, 'sql-server.ts'),
    JSON.stringify({ ...s3Env, QUERY_RUNNER_URLS: runner.url, QUERY_RUNNER_TOKEN: TEST_RUNNER_TOKEN, DATABASE_URL: database.url, REDIS_URL: redis.url, DATA_DIR: join(work.dir, 'api'), OBJECT_CACHE_MAX_MB: OBJECT_CACHE_MB, OBJECT_CACHE_WARM_CONCURRENCY: WARM ? '1' : '0', OBJECT_CACHE_WARM_POLL_MS: '200' }),
  ]);
  try {
    const auth = { authorization: `Bearer ${api.info.apiKey}`, 'content-type': 'application/json' };
    if (PARTS.has('queries')) await benchQueries(runner.url, api.info.url, { api: api.child.pid!, runner: runner.child.pid! }, auth, redis);
    if (blobs.length > 0) await benchExports(store, api.info.url, api.child.pid!, auth, blobs, join(work.dir, 'api', 'object-cache'));
    process.stdout.write(
      `\ncommand: npm run bench:sql (BENCH_ROWS=${ROWS}, BENCH_ITERATIONS=${ITERATIONS}, BENCH_EXPORT_MB=${sizes.join(',')}, BENCH_PARTS=${[...PARTS].join(',')}, BENCH_OBJECT_CACHE_MB=${OBJECT_CACHE_MB}, BENCH_WARM=${WARM ? 1 : 0}); S3 ${s3.endpoint}\n`,
    );
  } finally {
    await Promise.all([stop(api.child), stop(runner.child)]);
    s3.child?.kill('SIGKILL');
    await redis.close();
    await database.drop();
    await rm(work.dir, { recursive: true, force: true });
  }
}

async function benchQueries(runnerUrl: string, apiUrl: string, pids: { api: number; runner: number }, auth: Record<string, string>, redis: CountingRedisProxy): Promise<void> {
  process.stdout.write(
    `\nquery latency, median of ${ITERATIONS} runs each, the runner and the API taking turns, after one untimed call each; ` +
      'uncached except the last row (ms). CPU ms per request: the API process, and the runner process for the API\'s calls and for the direct ones; ' +
      'the API\'s CPU µs and Redis round trips per request\n',
  );
  process.stdout.write(
    `${'query'.padEnd(16)} ${'runner'.padStart(8)} ${'API'.padStart(8)} ${'overhead'.padStart(9)} ${'added'.padStart(8)} ${'API CPU'.padStart(8)} ${'runner CPU via API / direct'.padStart(28)} ${'API µs/req'.padStart(10)} ${'Redis RT/req'.padStart(12)}\n`,
  );
  const viaApi = (sql: string) => async () => {
    const res = await fetch(`${apiUrl}/api/v1/query`, { method: 'POST', headers: auth, body: JSON.stringify({ sql }) });
    if (res.status !== 200) throw new Error(`${sql}: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  };
  for (const q of QUERIES) {
    // A fresh query id (direct) or a fresh comment (API, which makes the id) per call: every call executes the query.
    const row = await race(pids, redis, {
      direct: () => directQuery(runnerUrl, { queryId: randomUUID(), sql: q.sql, format: 'json' }),
      api: () => viaApi(`/* ${randomUUID()} */ ${q.sql}`)(),
    });
    printRow(q.name, row);
  }
  // The same point lookup re-read inside its window: no execution, so what remains is plumbing
  // (authentication, counters, billing, the runner call).
  const point = QUERIES[0]!.sql;
  const queryId = randomUUID();
  const apiSql = `/* ${randomUUID()} */ ${point}`;
  printRow('stored re-read', await race(pids, redis, { direct: () => directQuery(runnerUrl, { queryId, sql: point, format: 'json' }), api: viaApi(apiSql) }));
}

/**
 * The runner called as the API calls it (the same body, the result envelope, the body read as
 * bytes), so the comparison is like for like: the runner runs, stores Parquet and JSON either way.
 */
async function directQuery(runnerUrl: string, body: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${runnerUrl}/v1/queries`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: RESULT_ENVELOPE_TYPE, ...RUNNER_AUTH },
    body: JSON.stringify({ datasets: [], tenant: 'bench', ...body }),
  });
  if (res.status !== 200) throw new Error(`runner: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
}

interface RaceRow {
  direct: number;
  api: number;
  apiCpu: number;
  runnerCpuViaApi: number;
  runnerCpuDirect: number;
  /** Redis batches the API wrote per API call. */
  redisPerCall: number;
}

/**
 * The direct call and the API call in turns, after one untimed call of each (first-call costs:
 * lazy set-up, JIT, connections), so a load that changes during the run hits both sides alike.
 * CPU is summed over the timed calls of each side.
 */
async function race(pids: { api: number; runner: number }, redis: CountingRedisProxy, calls: { direct: () => Promise<void>; api: () => Promise<void> }): Promise<RaceRow> {
  await calls.direct();
  await calls.api();
  const times = { direct: [] as number[], api: [] as number[] };
  const cpu = { api: 0, runnerViaApi: 0, runnerDirect: 0 };
  let redisBatches = 0;
  for (let i = 0; i < ITERATIONS; i++) {
    let runnerBefore = cpuMs(pids.runner);
    let start = performance.now();
    await calls.direct();
    times.direct.push(performance.now() - start);
    cpu.runnerDirect += cpuMs(pids.runner) - runnerBefore;
    const apiBefore = cpuMs(pids.api);
    runnerBefore = cpuMs(pids.runner);
    const batchesBefore = redis.batches;
    start = performance.now();
    await calls.api();
    times.api.push(performance.now() - start);
    redisBatches += redis.batches - batchesBefore;
    cpu.api += cpuMs(pids.api) - apiBefore;
    cpu.runnerViaApi += cpuMs(pids.runner) - runnerBefore;
  }
  return {
    direct: median(times.direct),
    api: median(times.api),
    apiCpu: cpu.api / ITERATIONS,
    runnerCpuViaApi: cpu.runnerViaApi / ITERATIONS,
    runnerCpuDirect: cpu.runnerDirect / ITERATIONS,
    redisPerCall: redisBatches / ITERATIONS,
  };
}

function printRow(name: string, row: RaceRow): void {
  const overhead = `${((100 * (row.api - row.direct)) / row.direct).toFixed(1)}%`;
  const runnerCpu = `${row.runnerCpuViaApi.toFixed(1)} / ${row.runnerCpuDirect.toFixed(1)}`;
  const cells = [
    row.direct.toFixed(1).padStart(8),
    row.api.toFixed(1).padStart(8),
    overhead.padStart(9),
    (row.api - row.direct).toFixed(1).padStart(8),
    row.apiCpu.toFixed(1).padStart(8),
    runnerCpu.padStart(28),
    (row.apiCpu * 1000).toFixed(0).padStart(10),
    row.redisPerCall.toFixed(1).padStart(12),
  ];
  process.stdout.write(`${name.padEnd(16)} ${cells.join(' ')}\n`);
}

/**
 * The export part. The API warmed the first version at start-up; this publishes a new version of
 * the export files (new objects, the same bytes) while the API runs, as the exporter does, and
 * measures: the warm-up's copy (from its temporary file appearing to its commit, and the API's CPU
 * meanwhile), then a direct S3 GET, the first download of the new version on this pod and a repeat
 * download, in turns; three publishes, medians of each. BENCH_WARM=0 turns the warm-up off: the first download then streams from
 * S3 while it fills the cache (the cold path).
 */
async function benchExports(store: S3Store, apiUrl: string, apiPid: number, auth: Record<string, string>, blobs: readonly BenchBlob[], cacheDir: string): Promise<void> {
  // One download through the API: its MB/s, and the API's CPU ms per MB (a figure load barely moves).
  // Read with node:http, the client the direct S3 GET uses too: fetch (undici) costs this process
  // more CPU per byte, which on 2 cores showed up as a slower API.
  const viaApi = async (blob: BenchBlob, version: string) => {
    const cpuBefore = cpuMs(apiPid);
    const start = performance.now();
    const bytes = await httpDrain(`${apiUrl}/api/v1/export/${blob.name}?version=${version}`, auth);
    const megabytes = bytes / 1e6;
    return { mbS: megabytes / ((performance.now() - start) / 1000), cpuPerMb: (cpuMs(apiPid) - cpuBefore) / megabytes };
  };
  const direct = async (blob: BenchBlob) => {
    const start = performance.now();
    const object = (await store.get(blob.key))!;
    let bytes = 0;
    for await (const chunk of object.body) bytes += (chunk as Buffer).length;
    return bytes / 1e6 / ((performance.now() - start) / 1000);
  };
  if (WARM) await warmedAll(store, cacheDir, blobs);
  // One untimed download of the current version first, as a pod that has served before would be
  // (first-call costs: JIT, connections); with the warm-up on, it comes from the cache.
  const current = (await new Manifests(store).current())!.version;
  for (const blob of blobs) await viaApi(blob, current);
  const rssBefore = statusKb(apiPid, 'VmRSS') / 1024;
  type Figures = { mbS: number; cpuPerMb: number };
  const figures = new Map(blobs.map((blob) => [blob, { s3: [] as number[], copy: [] as Figures[], first: [] as Figures[], repeat: [] as Figures[] }]));
  const peak = await peakRssDuring(apiPid, async () => {
    for (let i = 0; i < PUBLISHES; i++) {
      const cpuBefore = cpuMs(apiPid);
      const version = await republish(store, blobs);
      if (WARM) for (const blob of blobs) figures.get(blob)!.copy.push(await warmCopy(store, cacheDir, blob, apiPid));
      if (WARM) log(`publish ${i + 1}: warm-up done; API CPU since the publish ${(cpuMs(apiPid) - cpuBefore).toFixed(0)} ms`);
      // Direct, first, repeat in turns, so a load that changes during the run hits all three alike.
      for (const blob of blobs) {
        const row = figures.get(blob)!;
        row.s3.push(await direct(blob));
        row.first.push(await viaApi(blob, version));
        row.repeat.push(await viaApi(blob, version));
      }
    }
  });
  const medianOf = (xs: Figures[]) => ({ mbS: median(xs.map((x) => x.mbS)), cpuPerMb: median(xs.map((x) => x.cpuPerMb)) });
  for (const [blob, row] of figures) {
    const s3MbS = median(row.s3);
    const line = (name: string, f: Figures) => `${name} ${f.mbS.toFixed(0)} MB/s, ${((100 * f.mbS) / s3MbS).toFixed(0)}% of direct; API CPU ${f.cpuPerMb.toFixed(2)} ms/MB\n`;
    process.stdout.write(`\n${blob.megabytes} MB export download (object cache ${OBJECT_CACHE_MB} MB, warm-up ${WARM ? 'on' : 'off'}), medians over ${PUBLISHES} publishes\n`);
    process.stdout.write(`direct S3 GET:                               ${s3MbS.toFixed(0)} MB/s\n`);
    if (WARM) {
      const copy = medianOf(row.copy);
      process.stdout.write(`warm-up copy S3 → cache (after the publish):  ${copy.mbS.toFixed(0)} MB/s; API CPU ${copy.cpuPerMb.toFixed(2)} ms/MB\n`);
    }
    process.stdout.write(line(WARM ? 'first download after publish (warmed):     ' : 'first download after publish (cold, S3):   ', medianOf(row.first)));
    process.stdout.write(line('repeat download (cached):                  ', medianOf(row.repeat)));
  }
  process.stdout.write(`API RSS before the publish ${rssBefore.toFixed(0)} MB, peak from the publish to the last download ${peak.toFixed(0)} MB\n`);
  process.stdout.write(`API peak RSS over the whole run (VmHWM) ${(statusKb(apiPid, 'VmHWM') / 1024).toFixed(0)} MB\n`);
}

/** Publishes a new export version whose bench files are new objects (the same bytes); its version. */
async function republish(store: S3Store, blobs: readonly BenchBlob[]): Promise<string> {
  const current = (await new Manifests(store).current())!;
  const version = newVersion(new Date(), randomBytes(3).toString('hex'));
  const files = [];
  for (const file of current.files) {
    const blob = blobs.find((b) => b.name === file.name);
    if (!blob) {
      files.push(file);
      continue;
    }
    blob.key = `${versionPrefix(version)}${blob.name}`;
    const info = await store.putFile(blob.key, blob.path, { contentType: file.content_type });
    files.push({ ...file, key: info.key, etag: info.etag });
  }
  const manifest = JSON.stringify({ ...current, version, built_at: new Date().toISOString(), files });
  await store.putBytes(versionManifestKey(version), manifest, { contentType: 'application/json' });
  await store.putBytes(MANIFEST_KEY, manifest, { contentType: 'application/json' });
  return version;
}

/** Waits until the API's cache holds every bench file of the current version (the start-up warm-up). */
async function warmedAll(store: S3Store, cacheDir: string, blobs: readonly BenchBlob[]): Promise<void> {
  for (const blob of blobs) {
    const path = join(cacheDir, entryName((await store.head(blob.key))!));
    while (!existsSync(path)) await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Times the warm-up's copy of one file: from its temporary file appearing in the cache folder to the
 * committed file appearing (sampled every 5 ms), and the API's CPU over that span.
 */
async function warmCopy(store: S3Store, cacheDir: string, blob: BenchBlob, apiPid: number): Promise<{ mbS: number; cpuPerMb: number }> {
  const info = (await store.head(blob.key))!;
  const path = join(cacheDir, entryName(info));
  const filling = () => readdirSync(cacheDir).some((name) => name.startsWith('.fill-'));
  while (!filling() && !existsSync(path)) await new Promise((r) => setTimeout(r, 5));
  const cpuBefore = cpuMs(apiPid);
  const start = performance.now();
  while (!existsSync(path)) await new Promise((r) => setTimeout(r, 5));
  const megabytes = info.size / 1e6;
  return { mbS: megabytes / ((performance.now() - start) / 1000), cpuPerMb: (cpuMs(apiPid) - cpuBefore) / megabytes };
}

await main();
