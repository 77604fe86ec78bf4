/**
 * `node api/bench/gateway-profile.ts <variant>[,<variant>…] [seconds] [rounds]`: where the gateway
 * chain's CPU goes. Starts `gateway-server.ts` under `--cpu-prof`, drives its routes with autocannon
 * (50 connections), stops it, and prints the profile's self time by package or area and the top
 * functions, so the shares quoted for a change can be printed again. Several variants take turns
 * (`rounds` times) in the one server, and a last table gives each function's self time per request
 * in each variant: what a chain adds to its floor, measured under the same load and in the same
 * process (JIT and GC state differ from one process to the next on this machine by up to ±30%).
 * Variants: anonymous, auth-only, charged, bare, bare-redis.
 * Env: BENCH_DATABASE_URL, BENCH_REDIS_URL, BENCH_CONNECTIONS (50), PROFILE_TOP (30), PROFILE_CALLERS (a
 * function name, e.g. `writeUtf8String`: its self time split by the stacks that called it).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { onServer } from './support.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  /** Microseconds on the monotonic clock, the one `process.hrtime` reads. */
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/**
 * The samples taken while the load ran, between two readings of the monotonic clock (µs), which
 * V8's profiler and `process.hrtime` share: the server's start-up (module compilation, migrations)
 * is not the chain's cost, and it was a large share of a short run.
 */
export function within(profile: Profile, fromUs: number, toUs: number): Profile {
  return withinAny(profile, [{ fromUs, toUs }]);
}

/** The samples taken inside any of `windows` (µs on the monotonic clock). */
export function withinAny(profile: Profile, windows: readonly { fromUs: number; toUs: number }[]): Profile {
  const samples: number[] = [];
  const timeDeltas: number[] = [];
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (!windows.some(({ fromUs, toUs }) => at >= fromUs && at <= toUs)) return;
    samples.push(id);
    timeDeltas.push(delta);
  });
  return { ...profile, samples, timeDeltas };
}

const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

const ROUTES: Record<string, { path: string; auth: boolean; bare?: boolean }> = {
  anonymous: { path: '/bench/anonymous', auth: false },
  'auth-only': { path: '/bench/auth-only', auth: true },
  charged: { path: '/bench/charged', auth: true },
  bare: { path: '/bench', auth: false, bare: true },
  'bare-redis': { path: '/bench/redis', auth: false, bare: true },
};

/** Which package or area a frame's code belongs to: an npm package, Node's internals, or our sources. */
export function areaOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1] ?? url;
  if (url.startsWith('node:')) return url.replace(/^node:internal\/(?:deps\/)?/, 'node:').split('/').slice(0, 2).join('/');
  const ours = /\/(api|shared)\/src\/(.*)$/.exec(url);
  return ours ? `${ours[1]}/${ours[2]}` : url;
}

/** Self time per key, in microseconds, and the total. */
export function selfTimes(profile: Profile, keyOf: (node: ProfileNode) => string): { total: number; byKey: Map<string, number> } {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const byKey = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    const node = nodes.get(id);
    if (!node) return;
    total += delta;
    const key = keyOf(node);
    byKey.set(key, (byKey.get(key) ?? 0) + delta);
  });
  return { total, byKey };
}

/** The profile's nodes by id, and each node's parent: the walk up a sample's stack. */
function profileTree(profile: Profile): { parent: Map<number, number>; nodes: Map<number, ProfileNode> } {
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  return { parent, nodes: new Map(profile.nodes.map((n) => [n.id, n])) };
}

/**
 * Inclusive time of our own functions (api/ and shared/ sources, and the middleware packages):
 * each sample counts once for every such function on its stack. Only synchronous stacks: the time
 * a function's awaited work takes later is not in it.
 */
export function inclusiveTimes(profile: Profile, wanted: (node: ProfileNode) => boolean): { total: number; byKey: Map<string, number> } {
  const { parent, nodes } = profileTree(profile);
  const byKey = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    total += delta;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const node = nodes.get(at);
      if (!node || !wanted(node)) continue;
      const { functionName, url, lineNumber } = node.callFrame;
      seen.add(`${functionName || '(anonymous)'}  ${areaOf(url, functionName)}:${lineNumber + 1}`);
    }
    for (const key of seen) byKey.set(key, (byKey.get(key) ?? 0) + delta);
  });
  return { total, byKey };
}

/** `functionName`'s self time by its callers' stack (up to `depth` frames), e.g. which socket writes are Redis's. */
export function callerStacks(profile: Profile, functionName: string, depth = 14): { total: number; byKey: Map<string, number> } {
  const { parent, nodes } = profileTree(profile);
  const byKey = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    if (nodes.get(id)?.callFrame.functionName !== functionName) return;
    const delta = profile.timeDeltas[i] ?? 0;
    total += delta;
    const frames: string[] = [];
    for (let at = parent.get(id); at !== undefined && frames.length < depth; at = parent.get(at)) {
      const frame = nodes.get(at)?.callFrame;
      if (frame) frames.push(`${frame.functionName || '(anonymous)'}@${areaOf(frame.url, frame.functionName)}`);
    }
    const key = frames.join(' < ');
    byKey.set(key, (byKey.get(key) ?? 0) + delta);
  });
  return { total, byKey };
}

function printTop(title: string, { total, byKey }: { total: number; byKey: Map<string, number> }, top: number): void {
  console.log(`\n${title} (self time, share of ${(total / 1e6).toFixed(2)} s sampled)`);
  for (const [key, micros] of [...byKey].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((100 * micros) / total).toFixed(1).padStart(6)}%  ${key}`);
  }
}

/** One timed run of a variant: when it ran (monotonic clock), how many requests, the server's CPU. */
interface LoadWindow {
  variant: string;
  fromUs: number;
  toUs: number;
  requests: number;
  cpuMicros: number;
}

/** When the load ran. */
const loadWindows: LoadWindow[] = [];

const functionKey = (n: ProfileNode) => `${n.callFrame.functionName || '(anonymous)'}  ${areaOf(n.callFrame.url, n.callFrame.functionName)}:${n.callFrame.lineNumber + 1}`;

/** Each function's self time per request in each variant (µs), sorted by what the last variant adds to the first. */
function printPerVariant(profile: Profile, variants: readonly string[], top: number): void {
  const perVariant = variants.map((variant) => {
    const own = loadWindows.filter((w) => w.variant === variant);
    const requests = Math.max(1, own.reduce((sum, w) => sum + w.requests, 0));
    const { byKey } = selfTimes(withinAny(profile, own), functionKey);
    return { requests, byKey };
  });
  const keys = new Set(perVariant.flatMap(({ byKey }) => [...byKey.keys()]).filter((key) => !key.startsWith('(idle)')));
  const rows = [...keys].map((key) => ({ key, us: perVariant.map(({ requests, byKey }) => (byKey.get(key) ?? 0) / requests) }));
  const added = (us: number[]) => (us.at(-1) ?? 0) - (us[0] ?? 0);
  rows.sort((a, b) => added(b.us) - added(a.us));
  const totals = perVariant.map(({ requests, byKey }) => [...byKey].reduce((sum, [key, us]) => (key.startsWith('(idle)') ? sum : sum + us), 0) / requests);
  console.log(`\nSelf time per request, µs (sampled wall time, idle left out), by variant: ${variants.join(' | ')}; sorted by ${variants.at(-1)} less ${variants[0]}`);
  console.log(`${totals.map((us) => us.toFixed(2).padStart(7)).join(' ')}  (all functions)`);
  for (const { key, us } of rows.slice(0, top)) console.log(`${us.map((v) => v.toFixed(2).padStart(7)).join(' ')}  ${key}`);
}

async function main(): Promise<void> {
  const variants = (process.argv[2] ?? 'anonymous').split(',');
  const seconds = Number(process.argv[3] ?? 10);
  const rounds = Math.max(1, Number(process.argv[4] ?? 1));
  if (!variants.every((variant) => ROUTES[variant])) throw new RangeError(`variants are among ${Object.keys(ROUTES).join(', ')}`);
  const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const redisUrl = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const dbName = `uda_prof_${randomBytes(4).toString('hex')}`;
  const profDir = await mkdtemp(join(tmpdir(), 'prof-gw-'));
  await onServer(adminUrl, `CREATE DATABASE ${dbName}`);
  const dbUrl = new URL(adminUrl);
  dbUrl.pathname = `/${dbName}`;
  const node = join(process.cwd(), 'node_modules/.bin/node');
  const child = spawn(node, ['--cpu-prof', `--cpu-prof-dir=${profDir}`, join(import.meta.dirname, 'gateway-server.ts'), dbUrl.toString(), redisUrl], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const info = await new Promise<{ bare: string; chain: string; apiKey: string }>((resolve, reject) => {
      child.stdout.once('data', (chunk: Buffer) => resolve(JSON.parse(chunk.toString().split('\n')[0] ?? '{}')));
      child.once('exit', (code) => reject(new Error(`bench server exited ${code}`)));
    });
    // The server's own CPU clock (profiling included) around each run: µs per request.
    const cpuMicros = async () => ((await (await fetch(`${info.bare}/cpu`)).json()) as { micros: number }).micros;
    for (let round = 0; round < rounds; round++) {
      for (const variant of variants) {
        const route = ROUTES[variant] as (typeof ROUTES)[string];
        const url = `${route.bare ? info.bare : info.chain}${route.path}`;
        const headers = route.auth ? { authorization: `Bearer ${info.apiKey}` } : {};
        const before = await cpuMicros();
        const fromUs = monotonicUs();
        const r = await autocannon({ url, connections: Number(process.env.BENCH_CONNECTIONS ?? 50), duration: seconds, headers });
        const toUs = monotonicUs();
        const cpu = (await cpuMicros()) - before;
        loadWindows.push({ variant, fromUs, toUs, requests: r.requests.total, cpuMicros: cpu });
        console.log(`${variant}: ${r.requests.total} requests in ${seconds} s (${r.non2xx} non-2xx, ${r.errors} errors), server CPU ${(cpu / Math.max(1, r.requests.total)).toFixed(0)} µs/request under the profiler`);
      }
    }
  } finally {
    await new Promise((resolve) => {
      child.once('exit', resolve);
      child.kill('SIGTERM');
    });
    await onServer(adminUrl, `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  }
  await printProfile(profDir, variants);
  console.log(`Command: node api/bench/gateway-profile.ts ${variants.join(',')} ${seconds} ${rounds}`);
}

/** The profile's shares while the load ran: by area, by function, inclusive, and per variant when there are several. */
async function printProfile(profDir: string, variants: string[]): Promise<void> {
  const [file] = (await readdir(profDir)).filter((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no profile in ${profDir}`);
  const whole = JSON.parse(await readFile(join(profDir, file), 'utf8')) as Profile;
  const profile = withinAny(whole, loadWindows);
  const sampledS = (p: Profile) => (p.timeDeltas.reduce((sum, delta) => sum + delta, 0) / 1e6).toFixed(2);
  console.log(`Shares below: the ${sampledS(profile)} s sampled while the load ran, of ${sampledS(whole)} s in the profile`);
  const top = Number(process.env.PROFILE_TOP ?? 30);
  printTop('By package or area', selfTimes(profile, (n) => areaOf(n.callFrame.url, n.callFrame.functionName)), top);
  printTop('By function', selfTimes(profile, functionKey), top);
  printTop(
    'Inclusive, our code and middleware packages',
    inclusiveTimes(profile, (n) => /\/(api|shared)\/src\/|node_modules\/(helmet|express|router|ioredis|prom-client|rate-limiter-flexible)\//.test(n.callFrame.url)),
    top,
  );
  const callers = process.env.PROFILE_CALLERS;
  if (callers) printTop(`Callers of ${callers}`, callerStacks(profile, callers), 8);
  if (variants.length > 1) printPerVariant(whole, variants, top);
  console.log(`\nProfile: ${join(profDir, file)}`);
}

if (import.meta.main) await main();
