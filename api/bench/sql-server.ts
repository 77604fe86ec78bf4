/**
 * The API process `sql.bench.ts` measures, on its own so the client doesn't steal its CPU and its
 * RSS is its own. Argument: one JSON object of config settings. Prints one JSON line with the URL
 * and a Pro key with ample credit, then serves until killed.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { parseApiConfig } from '../src/config.ts';
import { buildApp } from '../src/app.ts';
import { DEFAULT_LIMITS } from '../src/limits.ts';
import { listen } from '../src/server.ts';
import { buildServices } from '../src/services.ts';

const settings = JSON.parse(process.argv[2] ?? '{}') as Record<string, string>;
const config = parseApiConfig({
  REDIS_KEY_PREFIX: `uda-bench-sql:${randomBytes(4).toString('hex')}:`,
  KEY_PEPPER: randomBytes(32).toString('hex'),
  KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
  LOG_LEVEL: 'silent',
  ...settings,
});
// The benchmark sends many requests from one IP: lift the counts, keep the work.
const huge = 1_000_000_000;
const services = await buildServices(config, {
  defaultMetrics: false,
  limits: { ...DEFAULT_LIMITS, burst: { points: huge, windowS: 900 }, exportDaily: huge },
});
const account = await services.accounts.create({ email: 'bench-sql@example.com', tier: 'pro' });
await services.accounts.addTopoff(account.id, 1_000_000_000_000);
const apiKey = await services.keys.create(account.id, 'bench');
if (process.env.BENCH_PHASES) timePhases(services);
const listening = await listen(buildApp(services), 0, '127.0.0.1');
if (process.env.BENCH_PHASES) {
  listening.server.on('request', (_req: unknown, res: ServerResponse) => {
    const start = performance.now();
    res.once('finish', () => record('request (to finish)', performance.now() - start));
  });
}
process.stdout.write(`${JSON.stringify({ url: listening.url, apiKey })}\n`);
// SIGTERM ends the process normally, so that `--cpu-prof` (BENCH_CPU_PROF) writes its profile.
process.once('SIGTERM', () => process.exit(0));

/**
 * BENCH_PHASES: the wall time the API spends in each service call, summed over the run and printed
 * on exit, from outside the production code (its methods are wrapped here).
 */
const phases = new Map<string, { n: number; ms: number }>();
function record(name: string, ms: number): void {
  const phase = phases.get(name) ?? { n: 0, ms: 0 };
  phase.n += 1;
  phase.ms += ms;
  phases.set(name, phase);
}
function timePhases(s: typeof services): void {
  const wrap = (label: string, target: object, names: string[]) => {
    for (const name of names) {
      const original = (target as Record<string, unknown>)[name] as (...args: unknown[]) => unknown;
      (target as Record<string, unknown>)[name] = function timed(this: unknown, ...args: unknown[]) {
        const start = performance.now();
        const out = original.apply(this, args);
        if (out instanceof Promise) return out.finally(() => record(`${label}.${name}`, performance.now() - start));
        record(`${label}.${name}`, performance.now() - start);
        return out;
      };
    }
  };
  wrap('runners', s.runners, ['runQuery', 'storedResult']);
  wrap('billing', s.billing, ['deliverWindow', 'requireCredit', 'balance', 'refreshBuckets']);
  wrap('ledger', s.ledger, ['window', 'charge']);
  wrap('limiter', s.limiterBackend, ['take']);
  wrap('store', s.store, ['get']);
  wrap('keys', s.keys, ['resolve']);
  process.once('exit', () => {
    for (const [name, p] of [...phases].sort((a, b) => b[1].ms - a[1].ms)) process.stderr.write(`phase ${name.padEnd(28)} n=${String(p.n).padStart(4)} mean ${(p.ms / p.n).toFixed(2)} ms\n`);
  });
}
