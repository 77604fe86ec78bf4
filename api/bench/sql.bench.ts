/**
 * `npm run bench:sql`, in one run:
 *   1. `POST /api/v1/query` end to end against calling the runner directly, for the runner
 *      benchmark's queries (the API's overhead ratio; goal ≤ 10% for queries over 50 ms);
 *   2. a 200 MB export download through the API against a direct GET of the same object from the
 *      S3-compatible server (goal ≥ 80%), with the API's peak RSS (goal: flat).
 * Every process is separate: s3rver, one runner, the API, and this client.
 * Env: BENCH_ROWS (2,000,000), BENCH_ITERATIONS (20), BENCH_EXPORT_MB (200), BENCH_DATABASE_URL,
 * BENCH_REDIS_URL, S3_ENDPOINT/S3_ACCESS_KEY_ID/S3_SECRET_ACCESS_KEY (an external S3 instead of s3rver).
 */
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { S3Store } from '@uda/shared/object-store';
import { postQuery, startChild, waitReady } from '@uda/query-runner/test-support/harness';
import { benchDatabase, bigFile, createBenchDatabase, publish, spawnJson } from './sql-fixtures.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 2_000_000);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 20);
const EXPORT_MB = Number(process.env.BENCH_EXPORT_MB ?? 200);
const NODE = join(process.cwd(), 'node_modules/.bin/node');

const QUERIES = [
  { name: 'point lookup', sql: 'SELECT * FROM gutenberg WHERE text_id = 123457' },
  { name: 'filtered scan', sql: "SELECT count(*) AS n FROM gutenberg WHERE title LIKE '%99%' AND language = 'en'" },
  { name: 'GROUP BY', sql: 'SELECT authors, count(*) AS n, avg(text_id) AS mean FROM gutenberg GROUP BY authors ORDER BY n DESC' },
  { name: '1,000-row JSON', sql: 'SELECT * FROM gutenberg WHERE text_id % 5 = 0' },
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function timeIt(once: (i: number) => Promise<void>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const start = performance.now();
    await once(i);
    times.push(performance.now() - start);
  }
  return median(times);
}

async function drain(res: Response): Promise<number> {
  let bytes = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
  return bytes;
}

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(field));
  return Number(line?.split(/\s+/)[1] ?? NaN);
}

const log = (text: string) => process.stderr.write(`${text}\n`);

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
  log(`building the bench database (${ROWS} rows) and a ${EXPORT_MB} MB export file…`);
  const work = await createBenchDatabase(ROWS);
  const blob = await bigFile(work.dir, EXPORT_MB);
  await publish(store, work.dbPath, blob);
  log('starting the runner and the API…');
  const runner = await startChild({ ...s3Env, DATA_DIR: join(work.dir, 'runner'), RUNNER_PORT: '0', LOG_LEVEL: 'warn', MANIFEST_POLL_MS: '500' });
  log(`runner at ${runner.url}`);
  await waitReady(runner.url, 120_000);
  log('runner ready');
  const database = await benchDatabase();
  const api = await spawnJson<{ url: string; apiKey: string }>(NODE, [
    join(import.meta.dirname, 'sql-server.ts'),
    JSON.stringify({ ...s3Env, QUERY_RUNNER_URLS: runner.url, DATABASE_URL: database.url, REDIS_URL: database.redisUrl, DATA_DIR: join(work.dir, 'api') }),
  ]);
  try {
    const auth = { authorization: `Bearer ${api.info.apiKey}`, 'content-type': 'application/json' };
    process.stdout.write(`\nquery latency, median of ${ITERATIONS} uncached runs each (ms)\n`);
    process.stdout.write(`${'query'.padEnd(16)} ${'runner'.padStart(8)} ${'API'.padStart(8)} ${'overhead'.padStart(9)}\n`);
    for (const q of QUERIES) {
      const direct = await timeIt(async () => {
        const res = await postQuery(runner.url, { queryId: randomUUID(), sql: q.sql, format: 'json' });
        if (res.status !== 200) throw new Error(`${q.name}: ${JSON.stringify(res.body)}`);
      });
      // A fresh comment per run gives a fresh query id, so every API call executes the query.
      const viaApi = await timeIt(async (i) => {
        const res = await fetch(`${api.info.url}/api/v1/query`, { method: 'POST', headers: auth, body: JSON.stringify({ sql: `/* ${randomUUID()} ${i} */ ${q.sql}` }) });
        if (res.status !== 200) throw new Error(`${q.name}: ${await res.text()}`);
        await res.arrayBuffer();
      });
      process.stdout.write(`${q.name.padEnd(16)} ${direct.toFixed(1).padStart(8)} ${viaApi.toFixed(1).padStart(8)} ${`${((100 * (viaApi - direct)) / direct).toFixed(1)}%`.padStart(9)}\n`);
    }
    const rssBefore = statusKb(api.child.pid!, 'VmRSS');
    const speeds = { api: [] as number[], s3: [] as number[] };
    for (let i = 0; i < 3; i++) {
      let start = performance.now();
      const bytes = await drain(await fetch(`${api.info.url}/api/v1/export/service.csv.zip`, { headers: auth }));
      speeds.api.push(bytes / 1e6 / ((performance.now() - start) / 1000));
      start = performance.now();
      const object = (await store.get(blob.key))!;
      let direct = 0;
      for await (const chunk of object.body) direct += (chunk as Buffer).length;
      speeds.s3.push(direct / 1e6 / ((performance.now() - start) / 1000));
    }
    const apiMbS = median(speeds.api);
    const s3MbS = median(speeds.s3);
    process.stdout.write(`\n${EXPORT_MB} MB export download, median of 3 (MB/s)\n`);
    process.stdout.write(`through the API ${apiMbS.toFixed(0)}, direct from S3 ${s3MbS.toFixed(0)}: ${((100 * apiMbS) / s3MbS).toFixed(0)}% of direct\n`);
    process.stdout.write(`API RSS before downloads ${(rssBefore / 1024).toFixed(0)} MB, peak over the whole run (VmHWM) ${(statusKb(api.child.pid!, 'VmHWM') / 1024).toFixed(0)} MB\n`);
    process.stdout.write(`\ncommand: npm run bench:sql (BENCH_ROWS=${ROWS}, BENCH_ITERATIONS=${ITERATIONS}, BENCH_EXPORT_MB=${EXPORT_MB}); S3 ${s3.endpoint}\n`);
  } finally {
    api.child.kill('SIGKILL');
    runner.child.kill('SIGKILL');
    s3.child?.kill('SIGKILL');
    await database.drop();
    await rm(work.dir, { recursive: true, force: true });
  }
}

await main();
