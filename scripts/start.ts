/**
 * `npm start`: the whole service on one machine, on embedded defaults (DECISIONS §1). Builds the
 * exports from the bundled sample data when there are none, starts the query-runner as a child
 * process, then the API, and prints where everything is. Both are supervised: a child that crashes
 * is started again with back-off (the API answers 503 with Retry-After while its runner is away).
 * Ctrl-C or SIGTERM stops both gracefully. The runner token is generated into the data folder.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { commonEnv, envPort, loadConfigOrExit, parseConfig } from '@uda/shared/config';
import { MANIFEST_KEY } from '@uda/shared/manifest';
import { createObjectStore, objectStoreEnv } from '@uda/shared/object-store';
import { RUNNER_TOKEN_FILE } from '@uda/shared/runner-contract';
import { readOrCreateSecret } from '@uda/shared/secrets';
import { type Supervised, supervise } from './supervise.ts';

const ROOT = join(import.meta.dirname, '..');

const startEnv = z.object({
  ...commonEnv,
  ...objectStoreEnv,
  PORT: envPort.default(8080),
  METRICS_PORT: envPort.default(9090),
  ADMIN_PORT: envPort.default(8081),
  RUNNER_PORT: envPort.default(8090),
});

const config = loadConfigOrExit(() => parseConfig(startEnv, process.env));
const children: Supervised[] = [];
let stopping = false;

function run(name: string, script: string, env: Record<string, string>): void {
  const start = () => spawn(process.execPath, [join(ROOT, script)], { stdio: 'inherit', env: { ...process.env, ...env } });
  children.push(supervise({ name, start, log: (line) => console.error(line) }));
}

async function exportIfMissing(): Promise<void> {
  const store = createObjectStore(config);
  if (await store.head(MANIFEST_KEY)) return;
  console.error(`[start] no exports in ${store.description}: building them from the sample data`);
  const child = spawn(process.execPath, [join(ROOT, 'exporter/src/main.ts')], { stdio: 'inherit' });
  const code: number | null = await new Promise((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error('the export build failed; see the log above');
}

/** The dashboard is static files the API serves; build them once when they are missing. */
async function buildDashboardIfMissing(): Promise<void> {
  if (existsSync(join(ROOT, 'dashboard/dist/index.html'))) return;
  console.error('[start] building the dashboard (Vite)');
  const child = spawn(process.execPath, [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'], { cwd: join(ROOT, 'dashboard'), stdio: 'inherit' });
  const code: number | null = await new Promise((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error('the dashboard build failed; see the log above');
}

async function waitReady(url: string, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (stopping) return;
    const ok = await fetch(url).then((r) => r.ok, () => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what} did not become ready at ${url}`);
}

async function stop(code: number): Promise<void> {
  stopping = true;
  await Promise.all(children.map((c) => c.stop()));
  process.exit(code);
}

process.once('SIGINT', () => void stop(0));
process.once('SIGTERM', () => void stop(0));

try {
  await exportIfMissing();
  await buildDashboardIfMissing();
  const runnerUrl = `http://127.0.0.1:${config.RUNNER_PORT}`;
  // The runner refuses callers without its token; both processes get the data folder's.
  const runnerToken = readOrCreateSecret(config.DATA_DIR, RUNNER_TOKEN_FILE);
  run('query-runner', 'query-runner/src/main.ts', { RUNNER_PORT: String(config.RUNNER_PORT), RUNNER_METRICS_PORT: '', RUNNER_TOKEN: runnerToken });
  await waitReady(`${runnerUrl}/readyz`, 'the query-runner');
  run('api', 'scripts/api.ts', {
    PORT: String(config.PORT),
    METRICS_PORT: String(config.METRICS_PORT),
    ADMIN_PORT: String(config.ADMIN_PORT),
    QUERY_RUNNER_URLS: runnerUrl,
    QUERY_RUNNER_TOKEN: runnerToken,
  });
  await waitReady(`http://127.0.0.1:${config.METRICS_PORT}/readyz`, 'the API');
  console.error(
    [
      '',
      'Unified Data API is running on embedded defaults:',
      `  API            http://127.0.0.1:${config.PORT}   (try: curl http://127.0.0.1:${config.PORT}/api/v1/auth/usage)`,
      `  dashboard      http://127.0.0.1:${config.PORT}/dashboard/   (sign up, get a key, usage, sheets, SQL console)`,
      `  health/metrics http://127.0.0.1:${config.METRICS_PORT}/readyz  /metrics`,
      `  admin API      http://127.0.0.1:${config.ADMIN_PORT}   (npm run admin -- account create --email you@example.com --tier free)`,
      `  query-runner   ${runnerUrl}   (internal)`,
      `  data folder    ${join(config.DATA_DIR)}   (exports, database, generated secrets)`,
      '',
    ].join('\n'),
  );
} catch (error) {
  console.error(`[start] ${error instanceof Error ? error.message : String(error)}`);
  await stop(1);
}
