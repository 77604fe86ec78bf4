/**
 * The API processes `lookup.bench.ts` measures, in their own process so autocannon doesn't steal
 * their CPU: the real app on real PostgreSQL and Redis, its runner client pointed at a real
 * query-runner, and its live clients at a local Wikipedia fake. Two instances: the default (every live
 * lookup goes upstream, identical concurrent ones coalesced) and one with the fresh cache on.
 * Prints one JSON line with the URLs and keys, then serves until killed.
 */
import { randomBytes } from 'node:crypto';
import { buildApp } from '../src/app.ts';
import { benchApiConfig } from './support.ts';
import { migrate, openDb } from '../src/db/index.ts';
import { DEFAULT_LIMITS } from '../src/limits.ts';
import { listen } from '../src/server.ts';
import { buildServices, closeServices, type Services } from '../src/services.ts';

const [databaseUrl = '', redisUrl = '', runnerUrl = '', wikiUrl = ''] = process.argv.slice(2);

const config = benchApiConfig(databaseUrl, redisUrl, { QUERY_RUNNER_URLS: runnerUrl, WIKIPEDIA_BASE_URL: wikiUrl, WIKIPEDIA_REST_BASE_URL: wikiUrl });
const db = openDb({ databaseUrl, poolMax: config.DATABASE_POOL_MAX, dataDir: '/tmp' });
await migrate(db);
// One client IP sends everything: lift the counts, keep the work (the counters still run in Redis).
const huge = 1_000_000_000;
const limits = { ...DEFAULT_LIMITS, burst: { points: huge, windowS: 900 }, anonymous: { points: huge, windowS: 86_400 } };
const live = await buildServices(config, { db, defaultMetrics: false, limits });
const cached = await buildServices(config, { db, defaultMetrics: false, limits, live: { freshCacheMs: 600_000 } });

/** Paying callers spread over 50 accounts, as real traffic is: charges for one account share a row lock. */
async function keys(services: Services): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < 50; i++) {
    const account = await services.accounts.create({ email: `bench-${i}-${randomBytes(3).toString('hex')}@example.com`, tier: 'pro' });
    await services.accounts.addTopoff(account.id, 1_000_000_000_000);
    out.push(await services.keys.create(account.id, 'bench'));
  }
  return out;
}

const liveServer = await listen(buildApp(live), 0, '127.0.0.1');
const cachedServer = await listen(buildApp(cached), 0, '127.0.0.1');
process.stdout.write(`${JSON.stringify({ live: liveServer.url, cached: cachedServer.url, keys: await keys(live) })}\n`);
async function shutdown(): Promise<void> {
  for (const s of [liveServer, cachedServer]) {
    await s.close();
    s.server.closeAllConnections();
  }
  await closeServices(cached, { keepDb: true });
  await closeServices(live);
  process.exit(0);
}
process.once('SIGTERM', () => void shutdown());
