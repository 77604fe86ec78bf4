/**
 * The production topology on this machine, as real OS processes started the way their images start
 * them (`node api/src/main.ts`, `node query-runner/src/main.ts`): an S3-compatible server, the
 * exporter's build of the bundled samples into a fresh bucket, two query-runners sharing Redis, and
 * two APIs sharing a fresh PostgreSQL database, the runners and a Redis key prefix. The APIs trust
 * one proxy hop, as behind the chart's ingress, so the load can speak for many client addresses.
 * `stop()` ends everything it started and removes the database, the Redis keys and the files.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, readFileSync } from 'node:fs';
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { Redis } from 'ioredis';
import { onServer } from '@uda/api/bench/support';
import { createObjectStore, type ObjectStore } from '@uda/shared/object-store';
import { freePort, type OwnPostgres, type OwnRedis, startPostgres, startRedis } from '@uda/test-support/own-servers';
import { childEnv, type LoadConfig } from './config.ts';
import type { FaultTargets } from './faults.ts';

const ROOT = join(import.meta.dirname, '..');
const NODE = join(ROOT, 'node_modules/.bin/node');

export interface ServiceProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly log: string;
}

export interface ProcessSample {
  readonly name: string;
  /** VmHWM: the peak resident set size, MB. */
  readonly peakMb: number;
  /** User + system CPU time used since the process started, seconds. */
  readonly cpuS: number;
}

export interface Topology {
  /** Public base URLs of the two APIs. */
  readonly apiUrls: string[];
  readonly adminUrl: string;
  readonly adminToken: string;
  readonly databaseUrl: string;
  readonly processes: ServiceProcess[];
  /** Peak resident memory and CPU time so far of every process started and of their children (query workers). */
  sample(): ProcessSample[];
  /** SIGTERM the APIs and wait for them: their refunds and deliveries are written before they exit. */
  stopApis(): Promise<void>;
  /** Copies the processes' logs to a folder that outlives `stop()`, and returns its path. */
  keepLogs(): Promise<string>;
  /** Ends every process still running and removes the database, the Redis keys and the files. */
  stop(): Promise<void>;
  /** What the faults act on (`faults.ts`); the servers are there only when the run started its own. */
  readonly targets: FaultTargets;
  /** The run's bucket, as the APIs store into it (the usage log's files are read from it). */
  readonly bucket: ObjectStore;
}

/** How each process started, to start it again after a fault. */
interface Recipe {
  readonly script: string;
  readonly env: Record<string, string>;
  ready(p: ServiceProcess): Promise<unknown>;
}

/**
 * `onStop` receives the stop function before the first process starts, so a signal that arrives
 * while the topology is still starting stops what has started (and nothing starts after it).
 */
export async function startTopology(config: LoadConfig, onStop: (stop: () => Promise<void>) => void = () => undefined): Promise<Topology> {
  const run = randomBytes(4).toString('hex');
  const dir = await mkdtemp(join(tmpdir(), 'uda-load-'));
  const processes: ServiceProcess[] = [];
  const recipes = new Map<string, Recipe>();
  const cleanups: Cleanup[] = [() => rm(dir, { recursive: true, force: true })];
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await Promise.all(processes.map((p) => stopProcess(p.child)));
      for (const cleanup of cleanups.reverse()) await cleanup().catch((error: unknown) => console.error(`[load] cleanup: ${String(error)}`));
    })());
  onStop(stop);
  try {
    const start: Start = (name, script, env, ready) => {
      if (stopping) throw new Error('the load test was stopped');
      const started = startProcess(name, script, env, join(dir, `${name}.log`));
      const at = processes.findIndex((p) => p.name === name);
      if (at >= 0) processes[at] = started;
      else processes.push(started);
      recipes.set(name, { script, env, ready });
      return started;
    };
    const own = config.LOAD_FAULTS.length > 0 ? await ownServers(cleanups) : undefined;
    const redisUrl = own?.redis.url ?? config.LOAD_REDIS_URL;
    const s3 = await s3Server(config, start, cleanups);
    const redisPrefix = `uda-load:${run}:`;
    if (!own) cleanups.push(() => deleteRedisKeys(redisUrl, redisPrefix));
    const databaseUrl = await createDatabase(own?.postgres.url ?? config.LOAD_DATABASE_URL, `uda_load_${run}`, cleanups);
    await runToEnd('exporter', 'exporter/src/main.ts', { ...s3, DATA_DIR: join(dir, 'exporter'), LOG_LEVEL: 'warn' }, join(dir, 'exporter.log'));
    // Every API→runner call carries the runners' token, as the chart's Secret gives both.
    const runnerToken = randomBytes(32).toString('hex');
    const runnerUrls = await Promise.all(
      [1, 2].map((i) => startRunner(start, i, { ...s3, DATA_DIR: join(dir, `runner-${i}`), REDIS_URL: redisUrl, REDIS_KEY_PREFIX: `${redisPrefix}runner:`, RUNNER_TOKEN: runnerToken })),
    );
    const adminToken = randomBytes(32).toString('hex');
    const apiEnv = apiEnvOf({ s3, databaseUrl, redisUrl, redisPrefix, adminToken, runnerUrls, runnerToken });
    // One after the other: each migrates the database at start.
    const first = await startApi(start, 1, { ...apiEnv, DATA_DIR: join(dir, 'api-1') });
    const second = await startApi(start, 2, { ...apiEnv, DATA_DIR: join(dir, 'api-2') });
    return { ...runningOf({ own, start, recipes, processes, stop }), bucket: openBucket(s3, dir), apiUrls: [first.url, second.url], adminUrl: first.adminUrl, adminToken, databaseUrl };
  } catch (error) {
    await printLogs(processes);
    await stop();
    throw error;
  }
}

interface ApiEnvParts {
  readonly s3: Record<string, string>;
  readonly databaseUrl: string;
  readonly redisUrl: string;
  readonly redisPrefix: string;
  readonly adminToken: string;
  readonly runnerUrls: readonly string[];
  readonly runnerToken: string;
}

function apiEnvOf({ s3, databaseUrl, redisUrl, redisPrefix, adminToken, runnerUrls, runnerToken }: ApiEnvParts): Record<string, string> {
  return {
    ...s3,
    ...LIVE_SOURCES_OFFLINE,
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: redisPrefix,
    KEY_PEPPER: randomBytes(32).toString('hex'),
    KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    ADMIN_TOKEN: adminToken,
    TRUST_PROXY_HOPS: '1',
    QUERY_RUNNER_URLS: runnerUrls.join(','),
    QUERY_RUNNER_TOKEN: runnerToken,
    LOG_LEVEL: 'warn',
  };
}

interface Running {
  readonly own: { redis: OwnRedis; postgres: OwnPostgres } | undefined;
  readonly start: Start;
  readonly recipes: ReadonlyMap<string, Recipe>;
  readonly processes: ServiceProcess[];
  readonly stop: () => Promise<void>;
}

/** What acts on the started processes: the faults' targets, the samples, the logs and the stops. */
function runningOf({ own, start, recipes, processes, stop }: Running): Omit<Topology, 'bucket' | 'apiUrls' | 'adminUrl' | 'adminToken' | 'databaseUrl'> {
  const named = (name: string) => processes.find((p) => p.name === name);
  const targets: FaultTargets = {
    ...own,
    signal: async (name, signal) => void (await signalProcess(named(name)!.child, signal)),
    restart: async (name) => {
      const recipe = recipes.get(name)!;
      await recipe.ready(start(name, recipe.script, recipe.env, recipe.ready));
    },
  };
  return {
    targets,
    processes,
    sample: () => processes.flatMap((p) => sampleTree(p.name, p.child.pid)),
    stopApis: async () => void (await Promise.all(processes.filter((p) => p.name.startsWith('api-')).map((p) => stopProcess(p.child)))),
    keepLogs: async () => {
      const kept = await mkdtemp(join(tmpdir(), 'uda-load-logs-'));
      await Promise.all(processes.map((p) => copyFile(p.log, join(kept, basename(p.log)))));
      return kept;
    },
    stop,
  };
}

/**
 * The API's live sources go upstream over the internet; the load test drives stored sources only,
 * and points the live clients at a closed local port so that a stray live lookup fails fast.
 */
const CLOSED = 'http://127.0.0.1:9';
const LIVE_SOURCES_OFFLINE = {
  WIKIPEDIA_BASE_URL: CLOSED,
  WIKIPEDIA_REST_BASE_URL: CLOSED,
  ARXIV_BASE_URL: CLOSED,
  STACKEXCHANGE_BASE_URL: CLOSED,
  PYPI_BASE_URL: CLOSED,
  OPENALEX_BASE_URL: CLOSED,
};

type Cleanup = () => Promise<unknown>;
/** Starts a process; `ready` says when it serves, and is what a restart after a fault waits for. */
type Start = (name: string, script: string, env: Record<string, string>, ready: (p: ServiceProcess) => Promise<unknown>) => ServiceProcess;

/** A Redis and a PostgreSQL cluster of the run's own: the faults stop, restart and flush them. */
async function ownServers(cleanups: Cleanup[]): Promise<{ redis: OwnRedis; postgres: OwnPostgres }> {
  const redis = await startRedis();
  cleanups.push(() => redis.close());
  const postgres = await startPostgres();
  cleanups.push(() => postgres.close());
  return { redis, postgres };
}

async function s3Server(config: LoadConfig, start: Start, cleanups: Cleanup[]): Promise<Record<string, string>> {
  // A fault needs an s3rver it can stop (s3-down) and the run's own servers everywhere.
  const useGiven = config.LOAD_FAULTS.length === 0 && config.S3_ENDPOINT;
  const endpoint = useGiven || (await startS3rver(start, cleanups));
  // The given keys belong to the given server (Swift's in CI); s3rver knows only its own.
  const credentials = useGiven
    ? { accessKeyId: config.S3_ACCESS_KEY_ID, secretAccessKey: config.S3_SECRET_ACCESS_KEY }
    : { accessKeyId: S3RVER_KEY, secretAccessKey: S3RVER_KEY };
  const bucket = `uda-load-${randomBytes(4).toString('hex')}`;
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  client.destroy();
  return {
    S3_ENDPOINT: endpoint,
    S3_BUCKET: bucket,
    S3_ACCESS_KEY_ID: credentials.accessKeyId,
    S3_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    S3_REGION: 'us-east-1',
    S3_FORCE_PATH_STYLE: 'true',
  };
}

function openBucket(s3: Record<string, string>, dir: string): ObjectStore {
  const { S3_BUCKET, S3_ENDPOINT, S3_REGION = 'us-east-1', S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY } = s3;
  return createObjectStore({ S3_BUCKET, S3_ENDPOINT, S3_REGION, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, S3_FORCE_PATH_STYLE: true, S3_PART_SIZE_MB: 16, DATA_DIR: dir });
}

/** The one key pair s3rver accepts. */
const S3RVER_KEY = 'S3RVER';

/** s3rver in its own process (the bench's server script), so serving bytes has its own CPU time. */
async function startS3rver(start: Start, cleanups: Cleanup[]): Promise<string> {
  // A port and a folder chosen here, so that s3-down can start it again where it was, with its objects.
  const directory = await mkdtemp(join(tmpdir(), 'uda-load-s3-'));
  cleanups.push(() => rm(directory, { recursive: true, force: true }));
  const s3 = start('s3rver', 'api/bench/s3-server.ts', { S3RVER_PORT: String(await freePort()), S3RVER_DIRECTORY: directory }, firstLine);
  const { endpoint } = JSON.parse(await firstLine(s3)) as { endpoint: string };
  return endpoint;
}

async function createDatabase(serverUrl: string, name: string, cleanups: Cleanup[]): Promise<string> {
  await onServer(serverUrl, `CREATE DATABASE ${name}`);
  cleanups.push(() => onServer(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function startRunner(start: Start, i: number, env: Record<string, string>): Promise<string> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const ready = () => waitReady(`${url}/readyz`, `runner-${i}`);
  start(`runner-${i}`, 'query-runner/src/main.ts', { ...env, RUNNER_PORT: String(port), RUNNER_METRICS_PORT: '', LOG_LEVEL: 'warn' }, ready);
  await ready();
  return url;
}

async function startApi(start: Start, i: number, env: Record<string, string>): Promise<{ url: string; adminUrl: string }> {
  const [port, metricsPort, adminPort] = [await freePort(), await freePort(), await freePort()];
  const ready = () => waitReady(`http://127.0.0.1:${metricsPort}/readyz`, `api-${i}`);
  start(`api-${i}`, 'api/src/main.ts', { ...env, PORT: String(port), METRICS_PORT: String(metricsPort), ADMIN_PORT: String(adminPort) }, ready);
  await ready();
  return { url: `http://127.0.0.1:${port}`, adminUrl: `http://127.0.0.1:${adminPort}` };
}

function startProcess(name: string, script: string, env: Record<string, string>, logPath: string): ServiceProcess {
  const child = spawn(NODE, [join(ROOT, script)], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  // Appended: a process started again after a fault keeps its earlier life's lines.
  const log = createWriteStream(logPath, { flags: 'a' });
  child.stderr!.pipe(log);
  // stdout stays readable for the one-line announcements (s3rver); the log keeps a copy.
  child.stdout!.on('data', (chunk: Buffer) => log.write(chunk));
  return { name, child, log: logPath };
}

async function runToEnd(name: string, script: string, env: Record<string, string>, logPath: string): Promise<void> {
  const { child } = startProcess(name, script, env, logPath);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`${name} exited ${code}: ${await readFile(logPath, 'utf8')}`);
}

function firstLine(p: ServiceProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    p.child.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes('\n')) resolve(text.split('\n')[0]!);
    });
    p.child.once('exit', (code) => reject(new Error(`${p.name} exited ${code} before announcing itself`)));
  });
}

async function waitReady(url: string, name: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await fetch(url).then((r) => r.ok, () => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${name} did not become ready at ${url}`);
}

/** Sends the signal and waits for the exit. */
function signalProcess(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

/** SIGTERM, then SIGKILL after 30 s: the APIs' own grace (SHUTDOWN_GRACE_MS) is 10 s. */
function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('exit', () => (clearTimeout(kill), resolve()));
    child.kill('SIGTERM');
  });
}

function sampleTree(name: string, pid: number | undefined): ProcessSample[] {
  if (pid === undefined) return [];
  const kb = statusField(pid, 'VmHWM');
  if (kb === undefined) return [];
  const children = readText(`/proc/${pid}/task/${pid}/children`).split(' ').filter(Boolean).map(Number);
  return [{ name, peakMb: kb / 1024, cpuS: cpuSeconds(pid) }, ...children.flatMap((child) => sampleTree(`${name} › child ${child}`, child))];
}

/** utime + stime, fields 14 and 15 of /proc/<pid>/stat, counted after the command name's closing parenthesis. */
function cpuSeconds(pid: number): number {
  const stat = readText(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S;
}

/** USER_HZ, 100 on every Linux the service runs on (`getconf CLK_TCK`). */
const CLOCK_TICKS_PER_S = 100;

function statusField(pid: number, field: string): number | undefined {
  const line = readText(`/proc/${pid}/status`).split('\n').find((l) => l.startsWith(`${field}:`));
  return line ? Number(line.split(/\s+/)[1]) : undefined;
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

async function deleteRedisKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

export async function printLogs(processes: ServiceProcess[]): Promise<void> {
  for (const p of processes) {
    const text = await readFile(p.log, 'utf8').catch(() => '');
    if (text.trim()) console.error(`--- ${p.name} (${p.log}), last lines:\n${text.split('\n').slice(-30).join('\n')}`);
  }
}
