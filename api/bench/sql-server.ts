/**
 * The API process `sql.bench.ts` measures, on its own so the client doesn't steal its CPU and its
 * RSS is its own. Argument: one JSON object of config settings. Prints one JSON line with the URL
 * and a Pro key with ample credit, then serves until killed.
 */
import { randomBytes } from 'node:crypto';
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
const listening = await listen(buildApp(services), 0, '127.0.0.1');
process.stdout.write(`${JSON.stringify({ url: listening.url, apiKey })}\n`);
// SIGTERM ends the process normally, so that `--cpu-prof` (BENCH_CPU_PROF) writes its profile.
process.once('SIGTERM', () => process.exit(0));
