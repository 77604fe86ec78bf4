/**
 * `npm run bench:gateway`: requests per second and p99 at 50 connections on loopback for
 *   1. bare Express answering a fixed JSON body (a lookup envelope) with `res.json`;
 *   2. the same body behind the full chain, sent as the lookup routes send it (`sendJson`) (burst limit, auth with a valid key, daily cap,
 *      402 pre-check, metering with a real charge) on real PostgreSQL and Redis;
 *   3. the anonymous variant (burst limit + anonymous limit, no charge);
 *   4. the authenticated chain without the charge, to show what the charge costs;
 *   5. the charged chain with requests spread over 50 accounts, and the same chain without the charge;
 * then the reconciliation: the ledger's charges less refunds against the sum of `X-Credit-Cost` the
 * bench received, after the server wrote every pending lookup and settled every credit lease.
 * Each row also gives the server's CPU time per request, and bare Express's as a share of it: on a
 * shared machine that is steadier than req/s, which other processes' load moves. And its Redis
 * round trips per request: the writes the server process made on its Redis sockets (each one a
 * command or a pipeline that waits for its replies; `gateway-server.ts` counts them), beside Redis's
 * own count of commands processed (INFO stats), which is server-wide: other clients of the same
 * Redis add to it, so it is an upper bound on a shared machine.
 * The row `bare + 1 counter call` is the floor of any chain that decides its limits in Redis: bare
 * Express plus the limiter's one EVALSHA (burst and anonymous counters), nothing else.
 * Env: BENCH_DATABASE_URL, BENCH_REDIS_URL, BENCH_DURATION_S (default 10), BENCH_CONNECTIONS (50),
 * BENCH_ROUNDS (1: each variant runs that many times, the variants taking turns, and each row sums
 * its rounds; on a shared machine, 3 or more keep one variant from running alone in a load spike).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { onServer } from './support.ts';

const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const duration = Number(process.env.BENCH_DURATION_S ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 1));


interface Result {
  name: string;
  rps: number;
  p99: number;
  p50: number;
  non2xx: number;
  errors: number;
  /** Server CPU time per request (both servers share one process, measured one at a time). */
  cpuUsPerReq: number;
  /** Socket writes to Redis per request, counted in the server process. */
  redisTripsPerReq: number;
  /** Commands Redis processed per request, from INFO stats: every client of that Redis, not only ours. */
  redisCommandsPerReq: number;
}

/** Micro-USD of every `X-Credit-Cost` header received, warm-ups included. */
let receivedMicro = 0;

/** Status codes other than 200 seen, for the reconciliation line. */
const statuses = new Map<number, number>();

function countCost(client: autocannon.Client): void {
  client.on('response', (statusCode: number) => {
    if (statusCode !== 200) statuses.set(statusCode, (statuses.get(statusCode) ?? 0) + 1);
  });
  // At run time autocannon hands over the parser's record, whose `headers` is a flat name/value list.
  client.on('headers', (parsed) => {
    const headers = (parsed as unknown as { headers: string[] }).headers;
    for (let i = 0; i < headers.length; i += 2) {
      if (headers[i]?.toLowerCase() === 'x-credit-cost') receivedMicro += Math.round(Number(headers[i + 1]) * 1_000_000);
    }
  });
}

let cpuUrl = '';
const serverCounters = async () => (await (await fetch(cpuUrl)).json()) as { micros: number; redisWrites: number };
const redisInfo = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
const redisCommands = async () => Number(/total_commands_processed:(\d+)/.exec(await redisInfo.info('stats'))?.[1] ?? NaN);

interface Variant {
  name: string;
  url: string;
  headers?: Record<string, string>;
  /** Several keys: each request of a connection takes the next one, spreading charges over accounts. */
  keys?: string[];
}

/** One timed run of a variant: its autocannon result and the server's counters around it. */
async function runOnce({ url, headers = {}, keys }: Variant, warmUp: boolean) {
  const requests = keys?.map((key) => ({ method: 'GET' as const, headers: { authorization: `Bearer ${key}` } }));
  // A short warm-up so JIT, pools and Redis scripts are hot before measuring.
  if (warmUp) await autocannon({ url, connections, duration: 2, headers, requests, setupClient: countCost });
  const [before, commandsBefore] = [await serverCounters(), await redisCommands()];
  const r = await autocannon({ url, connections, duration, headers, requests, setupClient: countCost });
  const [after, commandsAfter] = [await serverCounters(), await redisCommands()];
  return {
    r,
    micros: after.micros - before.micros,
    redisWrites: after.redisWrites - before.redisWrites,
    // Less the one INFO call that read the count after the run.
    commands: commandsAfter - commandsBefore - 1,
  };
}

/**
 * Every variant `rounds` times, the variants taking turns, so a change in the machine's load falls
 * on all of them alike; each row sums its rounds' requests and CPU time (req/s and latencies are
 * the rounds' means).
 */
async function measureAll(variants: readonly Variant[]): Promise<Result[]> {
  const runs: Awaited<ReturnType<typeof runOnce>>[][] = variants.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (const [i, variant] of variants.entries()) runs[i]?.push(await runOnce(variant, round === 0));
  }
  return variants.map(({ name }, i) => {
    const own = runs[i] ?? [];
    const sum = (of: (run: (typeof own)[number]) => number) => own.reduce((total, run) => total + of(run), 0);
    const total = Math.max(1, sum((run) => run.r.requests.total));
    return {
      name,
      rps: sum((run) => run.r.requests.average) / own.length,
      p99: sum((run) => run.r.latency.p99) / own.length,
      p50: sum((run) => run.r.latency.p50) / own.length,
      non2xx: sum((run) => run.r.non2xx),
      errors: sum((run) => run.r.errors),
      cpuUsPerReq: sum((run) => run.micros) / total,
      redisTripsPerReq: sum((run) => run.redisWrites) / total,
      redisCommandsPerReq: sum((run) => run.commands) / total,
    };
  });
}

const dbName = `uda_bench_${randomBytes(4).toString('hex')}`;
await onServer(adminUrl, `CREATE DATABASE ${dbName}`);
const dbUrl = new URL(adminUrl);
dbUrl.pathname = `/${dbName}`;
const child = spawn(join(process.cwd(), 'node_modules/.bin/node'), [join(import.meta.dirname, 'gateway-server.ts'), dbUrl.toString(), redisUrl], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
try {
  const info = await new Promise<{ bare: string; chain: string; apiKey: string; spreadKeys: string[] }>((resolve, reject) => {
    child.stdout.once('data', (chunk: Buffer) => resolve(JSON.parse(chunk.toString().split('\n')[0] ?? '{}')));
    child.once('exit', (code) => reject(new Error(`bench server exited ${code}`)));
  });
  cpuUrl = `${info.bare}/cpu`;
  const auth = { authorization: `Bearer ${info.apiKey}` };
  const results = await measureAll([
    { name: 'bare express', url: `${info.bare}/bench` },
    { name: 'bare + 1 counter call', url: `${info.bare}/bench/redis` },
    { name: 'full chain + charge (auth)', url: `${info.chain}/bench/charged`, headers: auth },
    { name: 'anonymous chain', url: `${info.chain}/bench/anonymous` },
    { name: 'auth chain, no charge', url: `${info.chain}/bench/auth-only`, headers: auth },
    { name: 'charge, 50 accounts', url: `${info.chain}/bench/charged`, keys: info.spreadKeys },
    { name: 'no charge, 50 accounts', url: `${info.chain}/bench/auth-only`, keys: info.spreadKeys },
  ]);
  const base = results[0] as Result;
  console.log(`\nautocannon, ${connections} connections, ${duration} s each × ${rounds} round(s), variants taking turns, loopback; server in its own process`);
  console.log('variant                        req/s     p50 ms  p99 ms  vs bare  +p99 ms  non-2xx  errors  CPU µs/req  vs bare  Redis RT/req  cmds/req*');
  for (const r of results) {
    console.log(
      `${r.name.padEnd(30)} ${r.rps.toFixed(0).padStart(7)}  ${r.p50.toFixed(0).padStart(6)}  ${r.p99.toFixed(0).padStart(6)}  ${(
        (100 * r.rps) /
        base.rps
      )
        .toFixed(0)
        .padStart(6)}%  ${(r.p99 - base.p99).toFixed(0).padStart(7)}  ${String(r.non2xx).padStart(7)}  ${String(r.errors).padStart(6)}  ${r.cpuUsPerReq
        .toFixed(0)
        .padStart(10)}  ${((100 * base.cpuUsPerReq) / r.cpuUsPerReq).toFixed(0).padStart(6)}%  ${r.redisTripsPerReq.toFixed(2).padStart(12)}  ${r.redisCommandsPerReq
        .toFixed(2)
        .padStart(9)}`,
    );
  }
  console.log('Redis RT/req: socket writes to Redis by the server process (one per command or pipeline, each waiting for replies).');
  console.log('*cmds/req: Redis INFO total_commands_processed delta: counts the commands a script runs inside Redis too, and is server-wide (any other client of that Redis adds to it).');
  const byName = new Map(results.map((r) => [r.name, r]));
  const cost = (charged: string, uncharged: string) => {
    const [c, u] = [byName.get(charged)!, byName.get(uncharged)!];
    return `${(100 - (100 * c.rps) / u.rps).toFixed(0)}% of throughput, +${(c.p99 - u.p99).toFixed(0)} ms p99`;
  };
  console.log(`\nWhat the charge costs: 1 account ${cost('full chain + charge (auth)', 'auth chain, no charge')}; 50 accounts ${cost('charge, 50 accounts', 'no charge, 50 accounts')}`);
  // A timed run stops with requests in flight whose answers it drops unread; the reconciliation pass
  // sends a fixed number of charged requests over 50 accounts and reads every answer.
  // Charges and refunds only: a credit lease and its return move credit, they are not spending.
  const settle = async () => (await fetch(`${info.chain}/bench/settle`, { method: 'POST' })).ok || Promise.reject(new Error('settle failed'));
  const ledgerTotal = async () =>
    Number((await onServer<{ total: string }>(dbUrl.toString(), `SELECT coalesce(sum(amount_micro), 0) AS total FROM ledger WHERE kind IN ('charge', 'refund')`))[0]?.total);
  const chargeRows = async () => Number((await onServer<{ n: string }>(dbUrl.toString(), `SELECT count(*) AS n FROM ledger WHERE kind = 'charge'`))[0]?.n);
  await settle();
  const before = await ledgerTotal();
  const rowsBefore = await chargeRows();
  receivedMicro = 0;
  statuses.clear();
  const requests = info.spreadKeys.map((key) => ({ method: 'GET' as const, headers: { authorization: `Bearer ${key}` } }));
  const pass = await autocannon({ url: `${info.chain}/bench/charged`, connections, amount: 5_000, requests, setupClient: countCost });
  await settle();
  const charged = (await ledgerTotal()) - before;
  const paid = pass.requests.total - pass.non2xx;
  const rowsPerThousand = (1_000 * ((await chargeRows()) - rowsBefore)) / Math.max(1, paid);
  console.log(`Reconciliation (${pass.requests.total} charged requests, 50 accounts, ${pass.non2xx} non-2xx ${JSON.stringify(Object.fromEntries(statuses))}, ${pass.errors} errors, ${pass.timeouts} timeouts): ledger net ${charged} micro-USD; X-Credit-Cost received ${receivedMicro} micro-USD: ${charged === receivedMicro ? 'equal' : 'DIFFERENT'}`);
  console.log(`Ledger rows written: ${rowsPerThousand.toFixed(1)} per 1,000 paid requests (goal ≤ 10; a pod writes one row per account, lease and UTC day, which each flush adds to)`);
  console.log('\nGoals: anonymous ≥ 75% of bare and ≤ +2 ms p99; authenticated without charge ≥ 75%; charged ≥ 25%; the charge costs ≤ 10% and < 2 ms p99.');
  console.log(`Command: BENCH_DURATION_S=${duration} BENCH_CONNECTIONS=${connections} BENCH_ROUNDS=${rounds} npm run bench:gateway   (also BENCH_DATABASE_URL, BENCH_REDIS_URL)`);
} finally {
  await new Promise((resolve) => {
    child.once('exit', resolve);
    child.kill('SIGTERM');
  });
  redisInfo.disconnect();
  await onServer(adminUrl, `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
}
