/**
 * `npm run bench:gateway`: requests per second and p99 at 50 connections on loopback for
 *   1. bare Express answering a fixed JSON body;
 *   2. the same handler behind the full chain (burst limit, auth with a valid key, daily cap,
 *      402 pre-check, metering with a real charge) on real PostgreSQL and Redis;
 *   3. the anonymous variant (burst limit + anonymous limit, no charge);
 *   4. the authenticated chain without the charge, to show what the charge costs;
 *   5. the charged chain with requests spread over 50 accounts, and the same chain without the charge;
 * then the reconciliation: the ledger's charges less refunds against the sum of `X-Credit-Cost` the
 * bench received, after the server wrote every pending lookup and settled every credit lease.
 * Each row also gives the server's CPU time per request, and bare Express's as a share of it: on a
 * shared machine that is steadier than req/s, which other processes' load moves.
 * Env: BENCH_DATABASE_URL, BENCH_REDIS_URL, BENCH_DURATION_S (default 10), BENCH_CONNECTIONS (50).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { onServer } from './support.ts';

const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const duration = Number(process.env.BENCH_DURATION_S ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);


interface Result {
  name: string;
  rps: number;
  p99: number;
  p50: number;
  non2xx: number;
  errors: number;
  /** Server CPU time per request (both servers share one process, measured one at a time). */
  cpuUsPerReq: number;
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
const serverCpuMicros = async () => ((await (await fetch(cpuUrl)).json()) as { micros: number }).micros;

async function measure(name: string, url: string, headers: Record<string, string> = {}, keys?: string[]): Promise<Result> {
  // Several keys: each request of a connection takes the next one, spreading charges over accounts.
  const requests = keys?.map((key) => ({ method: 'GET' as const, headers: { authorization: `Bearer ${key}` } }));
  // A short warm-up so JIT, pools and Redis scripts are hot before measuring.
  await autocannon({ url, connections, duration: 2, headers, requests, setupClient: countCost });
  const cpuBefore = await serverCpuMicros();
  const r = await autocannon({ url, connections, duration, headers, requests, setupClient: countCost });
  const cpuUsPerReq = ((await serverCpuMicros()) - cpuBefore) / Math.max(1, r.requests.total);
  return { name, rps: r.requests.average, p99: r.latency.p99, p50: r.latency.p50, non2xx: r.non2xx, errors: r.errors, cpuUsPerReq };
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
  const results = [
    await measure('bare express', `${info.bare}/bench`),
    await measure('full chain + charge (auth)', `${info.chain}/bench/charged`, auth),
    await measure('anonymous chain', `${info.chain}/bench/anonymous`),
    await measure('auth chain, no charge', `${info.chain}/bench/auth-only`, auth),
    await measure('charge, 50 accounts', `${info.chain}/bench/charged`, {}, info.spreadKeys),
    await measure('no charge, 50 accounts', `${info.chain}/bench/auth-only`, {}, info.spreadKeys),
  ];
  const base = results[0] as Result;
  console.log(`\nautocannon, ${connections} connections, ${duration} s each, loopback; server in its own process`);
  console.log('variant                        req/s     p50 ms  p99 ms  vs bare  +p99 ms  non-2xx  errors  CPU µs/req  vs bare');
  for (const r of results) {
    console.log(
      `${r.name.padEnd(30)} ${r.rps.toFixed(0).padStart(7)}  ${String(r.p50).padStart(6)}  ${String(r.p99).padStart(6)}  ${(
        (100 * r.rps) /
        base.rps
      )
        .toFixed(0)
        .padStart(6)}%  ${(r.p99 - base.p99).toFixed(0).padStart(7)}  ${String(r.non2xx).padStart(7)}  ${String(r.errors).padStart(6)}  ${r.cpuUsPerReq
        .toFixed(0)
        .padStart(10)}  ${((100 * base.cpuUsPerReq) / r.cpuUsPerReq).toFixed(0).padStart(6)}%`,
    );
  }
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
  await settle();
  const before = await ledgerTotal();
  receivedMicro = 0;
  statuses.clear();
  const requests = info.spreadKeys.map((key) => ({ method: 'GET' as const, headers: { authorization: `Bearer ${key}` } }));
  const pass = await autocannon({ url: `${info.chain}/bench/charged`, connections, amount: 5_000, requests, setupClient: countCost });
  await settle();
  const charged = (await ledgerTotal()) - before;
  console.log(`Reconciliation (${pass.requests.total} charged requests, 50 accounts, ${pass.non2xx} non-2xx ${JSON.stringify(Object.fromEntries(statuses))}, ${pass.errors} errors, ${pass.timeouts} timeouts): ledger net ${charged} micro-USD; X-Credit-Cost received ${receivedMicro} micro-USD: ${charged === receivedMicro ? 'equal' : 'DIFFERENT'}`);
  console.log('\nGoals: anonymous ≥ 50% of bare, charged ≥ 25% of bare, both add < 3 ms at p99; the charge costs ≤ 10% and < 2 ms p99.');
  console.log('Command: npm run bench:gateway   (BENCH_DURATION_S, BENCH_CONNECTIONS, BENCH_DATABASE_URL, BENCH_REDIS_URL)');
} finally {
  await new Promise((resolve) => {
    child.once('exit', resolve);
    child.kill('SIGTERM');
  });
  await onServer(adminUrl, `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
}
