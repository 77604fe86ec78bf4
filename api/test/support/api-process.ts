/**
 * A real API process for tests that kill one (`billing.leases.test.ts`): the full service on
 * PostgreSQL and Redis from DATABASE_URL, REDIS_URL and REDIS_KEY_PREFIX, the bucket from S3_* when
 * set, and the test routes mounted. Prints `listening <url>` once it serves, then serves until it is killed.
 */
import { buildApp } from '../../src/app.ts';
import { DEFAULT_LIMITS } from '../../src/limits.ts';
import { listen } from '../../src/server.ts';
import { buildServices } from '../../src/services.ts';
import { testConfig } from '@uda/test-support/api-harness';
import { testRoutes } from './test-routes.ts';

// The bucket's settings, when the test gives them: its pods then share one bucket (the usage log's).
const s3 = Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[0].startsWith('S3_') && entry[1] !== undefined));
const config = testConfig({ DATABASE_URL: process.env.DATABASE_URL ?? '', REDIS_KEY_PREFIX: process.env.REDIS_KEY_PREFIX ?? '', ...s3 });
// Load, not limits, is what its tests drive: lift the per-key and per-IP counts.
const huge = 1_000_000_000;
const services = await buildServices(config, {
  defaultMetrics: false,
  limits: { ...DEFAULT_LIMITS, burst: { points: huge, windowS: 900 }, anonymous: { points: huge, windowS: 86_400 }, exportDaily: huge },
});
const listening = await listen(buildApp(services, { extraRoutes: testRoutes }), 0, '127.0.0.1');
process.stdout.write(`listening ${listening.url}\n`);
