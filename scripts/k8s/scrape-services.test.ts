/**
 * A real Prometheus scrapes a running api and query-runner (child processes on loopback, as in a
 * pod) after some traffic, and the series must match the metrics contract: every contract metric
 * present, template labels only, no key or IP in any label value.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { scrapeAndCheck } from './scrape-check.ts';
import { repo, tools } from '@uda/test-support/k8s';

const NODE = join(repo, 'node_modules/.bin/node');
const children: ChildProcess[] = [];
let dataDir: string;

/** Starts a service and resolves with the first JSON log line that `pick` accepts. */
function start(script: string, env: Record<string, string>, pick: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  const child = spawn(NODE, [join(repo, script)], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        if (pick(parsed)) resolve(parsed);
      } catch {
        // not a JSON log line (the demo key banner)
      }
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${String(code)}`)));
  });
}

let problems: string[];

beforeAll(async () => {
  tools();
  dataDir = await mkdtemp(join(tmpdir(), 'uda-scrape-'));
  const built = spawnSync(NODE, [join(repo, 'exporter/src/main.ts')], { env: { PATH: process.env.PATH, DATA_DIR: dataDir, LOG_LEVEL: 'warn' } });
  if (built.status !== 0) throw new Error('the export build failed');
  const redis = { REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379' };
  const prefix = `test:scrape:${randomBytes(4).toString('hex')}:`;
  const runner = await start(
    'query-runner/src/main.ts',
    { ...redis, DATA_DIR: dataDir, RUNNER_PORT: '0', RUNNER_METRICS_PORT: '0', REDIS_KEY_PREFIX: `${prefix}runner:`, MANIFEST_POLL_MS: '100', LOG_LEVEL: 'warn' },
    (line) => line.event === 'listening',
  );
  const api = await start(
    'api/src/main.ts',
    { ...redis, DATA_DIR: dataDir, PORT: '0', METRICS_PORT: '0', ADMIN_PORT: '0', REDIS_KEY_PREFIX: prefix, QUERY_RUNNER_URLS: String(runner.url), LOG_LEVEL: 'info' },
    (line) => line.msg === 'api listening',
  );
  for (let i = 0; i < 200; i++) {
    if ((await fetch(`${String(runner.url)}/readyz`)).ok) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  // Some traffic, including a 404 on a path that carries an id-like segment and a key-like token.
  await fetch(`${String(api.url)}/api/v1/auth/usage`);
  await fetch(`${String(api.url)}/no/such/path/12345?token=service_${'x'.repeat(40)}`);
  // Both processes share DATA_DIR, so both use the runner token generated there (the embedded default).
  const token = readFileSync(join(dataDir, 'runner-token'), 'utf8').trim();
  await fetch(`${String(runner.url)}/v1/lookups`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: '{"source":"food","keywords":"butter"}' });
  problems = await scrapeAndCheck([
    { component: 'api', url: String(api.metricsUrl).replace(/\/?$/, '/metrics') },
    { component: 'query-runner', url: String(runner.metricsUrl) },
  ]);
});

afterAll(async () => {
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(children.map((child) => new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)))));
  await rm(dataDir, { recursive: true, force: true });
});

describe('Prometheus scraping the running services', () => {
  it('finds every contract metric with clean labels on the api and the query-runner', () => {
    expect(problems).toEqual([]);
  });
});
