/**
 * Starts runners for tests: in-process (same composition as main.ts) or as child processes of
 * `node query-runner/src/main.ts`, for multi-runner and SIGKILL tests. Each test passes its own
 * Redis key prefix and bucket so parallel runs never share state.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseConfig } from '@uda/shared/config';
import { runnerAuthorization } from '@uda/shared/runner-contract';
import { createLogger } from '@uda/shared/logger';
import { runnerConfigSchema } from '@uda/query-runner/config';
import { startRunner } from '@uda/query-runner/runner';
import type { StartedRunner } from '@uda/query-runner/runner';

/** The runner token of every test runner (RUNNER_TOKEN) and of every test API (QUERY_RUNNER_TOKEN). */
export const TEST_RUNNER_TOKEN = 'test-runner-token-0123456789abcdefghijklmnopqrstuvwxyz';

/** The headers a caller of a test runner's /v1 routes sends. */
export const RUNNER_AUTH = runnerAuthorization(TEST_RUNNER_TOKEN);

export function redisPrefix(label: string): string {
  return `test:${label}:${randomBytes(4).toString('hex')}:`;
}

export async function runnerEnv(bucketEnv: Record<string, string>, extra: Record<string, string> = {}): Promise<Record<string, string>> {
  return {
    ...bucketEnv,
    DATA_DIR: await mkdtemp(join(tmpdir(), 'uda-runner-data-')),
    REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    RUNNER_PORT: '0',
    MANIFEST_POLL_MS: '100',
    LOG_LEVEL: 'silent',
    RUNNER_TOKEN: TEST_RUNNER_TOKEN,
    ...extra,
  };
}

export async function startInProcess(env: Record<string, string>): Promise<StartedRunner> {
  const config = parseConfig(runnerConfigSchema, { RUNNER_TOKEN: TEST_RUNNER_TOKEN, ...env });
  return startRunner(config, createLogger({ name: 'query-runner-test', level: config.LOG_LEVEL }));
}

export interface ChildRunner {
  readonly url: string;
  readonly metricsUrl: string;
  readonly child: ChildProcess;
  /** Resolves with the exit code or signal. */
  readonly exited: Promise<number | string | null>;
}

export async function startChild(env: Record<string, string>): Promise<ChildRunner> {
  const child = spawn('node_modules/.bin/node', ['query-runner/src/main.ts'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', RUNNER_TOKEN: TEST_RUNNER_TOKEN, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-4000)));
  const lines = createInterface({ input: child.stdout! });
  const started = await new Promise<{ url: string; metricsUrl: string }>((resolve, reject) => {
    lines.on('line', (line) => {
      if (line.includes('"event":"listening"')) resolve(JSON.parse(line) as { url: string; metricsUrl: string });
    });
    void exited.then((code) => reject(new Error(`runner exited before listening: ${String(code)}\n${stderr}`)));
  });
  return { ...started, child, exited };
}

export async function waitReady(url: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const res = await fetch(`${url}/readyz`).catch(() => undefined);
    if (res?.status === 200) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`runner at ${url} never became ready`);
}

export async function postQuery(url: string, body: Record<string, unknown>): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const res = await fetch(`${url}/v1/queries`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...RUNNER_AUTH },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

/** Sum of one counter over a runner's /metrics text. */
export async function counterValue(metricsUrl: string, name: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : 0;
}
