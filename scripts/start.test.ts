/**
 * The README's run command: `npm start` on a fresh data folder builds the exports, starts the
 * runner and the API, prints a working demo key and the dashboard's address, and stops cleanly on
 * SIGTERM. In real Chromium, a new user goes from the printed dashboard address to a working key
 * without the admin CLI. A SIGKILLed query-runner is restarted: meanwhile SQL and
 * lookups answer 503 with Retry-After, then they answer again.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { launchChromium } from '@uda/test-support/browser';

const ROOT = join(import.meta.dirname, '..');
let dataDir: string | undefined;

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

afterAll(async () => {
  // The service's processes may still store their last files (the usage log on SIGTERM) after the shell exits.
  if (dataDir) await rm(dataDir, { recursive: true, force: true, maxRetries: 20, retryDelay: 250 });
});

describe('npm start', () => {
  it('serves the API on embedded defaults with a demo key and a dashboard where a new user gets a working key, restarts a killed runner, then stops on SIGTERM', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'uda-start-'));
    const [port, metrics, admin, runner] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const child = spawn(join(ROOT, 'node_modules/.bin/node'), [join(ROOT, 'scripts/start.ts')], {
      env: {
        PATH: process.env.PATH,
        DATA_DIR: dataDir,
        PORT: String(port),
        METRICS_PORT: String(metrics),
        ADMIN_PORT: String(admin),
        RUNNER_PORT: String(runner),
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const key = await checkRunning(() => output, { port, runner });
      await checkRunnerRestart(child.pid!, { port, key });
    } finally {
      // Stop the service even when a check failed, so a failure never leaves it running.
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 240_000);
});

/** The service `npm start` printed answers: the demo key, the runner, and the dashboard up to a working key. */
async function checkRunning(outputOf: () => string, { port, runner }: { port: number; runner: number }): Promise<string> {
  let output = outputOf();
  for (let i = 0; i < 1800 && !output.includes('is running'); i++) {
    await new Promise((r) => setTimeout(r, 100));
    output = outputOf();
  }
  expect(output).toContain(`API            http://127.0.0.1:${port}`);

  const key = /Bearer (service_[0-9A-Za-z]{40,})/.exec(output)?.[1];
  expect(key).toBeDefined();
  const usage = await fetch(`http://127.0.0.1:${port}/api/v1/auth/usage`, { headers: { Authorization: `Bearer ${key}` } });
  expect(usage.status).toBe(200);
  expect(await usage.json()).toMatchObject({ account_state: 'authenticated' });
  expect((await fetch(`http://127.0.0.1:${runner}/readyz`)).status).toBe(200);

  const dashboard = /dashboard +(http:\S+)/.exec(output)?.[1];
  expect(dashboard).toBe(`http://127.0.0.1:${port}/dashboard/`);
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.goto(dashboard as string);
    await page.getByLabel('Email').fill('first@example.com');
    await page.getByLabel('Password').fill('a long enough password');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.getByRole('button', { name: 'Create key' }).click();
    const own = (await page.getByLabel('Full API key').textContent()) ?? '';
    const lookup = await fetch(`http://127.0.0.1:${port}/books/the%20art%20of%20war`, { headers: { Authorization: `Bearer ${own}` } });
    expect(lookup.status).toBe(200);
    expect(await lookup.json()).toMatchObject({ account_state: 'authenticated', data: { source: 'gutenberg' } });
  } finally {
    await browser.close();
  }
  return key as string;
}

/** The query-runner child of `npm start`, found from the process table (Linux /proc), not from its log. */
function runnerPidOf(startPid: number): number | undefined {
  const children = readFileSync(`/proc/${startPid}/task/${startPid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  return children.find((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('query-runner/src/main.ts');
    } catch {
      return false;
    }
  });
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 180_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** SIGKILL the runner: 503 with Retry-After in each route family's shape, then the runner is back. */
async function checkRunnerRestart(startPid: number, { port, key }: { port: number; key: string }): Promise<void> {
  const pid = runnerPidOf(startPid);
  expect(pid).toBeGreaterThan(0);
  const auth = { Authorization: `Bearer ${key}` };
  const sql = () =>
    fetch(`http://127.0.0.1:${port}/api/v1/query`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ sql: `SELECT title FROM gutenberg ORDER BY title LIMIT ${1 + Math.floor(Math.random() * 1000)}` }),
    });
  const lookup = () => fetch(`http://127.0.0.1:${port}/books/war`, { headers: auth });
  process.kill(pid!, 'SIGKILL');
  await until('the runner to die', async () => {
    try {
      process.kill(pid!, 0);
      return undefined;
    } catch {
      return true;
    }
  });
  // The restart waits at least a second, and the new runner then opens its database: both answer 503.
  const [away, awayLookup] = await Promise.all([sql(), lookup()]);
  expect(away.status).toBe(503);
  expect(Number(away.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(await away.json()).toMatchObject({ status: 'error', code: 'QUERY_BACKEND_UNAVAILABLE' });
  expect(awayLookup.status).toBe(503);
  expect(Number(awayLookup.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(await awayLookup.json()).toMatchObject({ status: 'error', data: { code: 'SOURCE_UNAVAILABLE' } });

  // The start script used to stop everything instead: this waits for a new runner.
  const restarted = await until('a restarted runner', async () => {
    const now = runnerPidOf(startPid);
    return now !== undefined && now !== pid ? now : undefined;
  });
  expect(restarted).not.toBe(pid);
  await until('SQL to answer again', async () => ((await sql()).status === 200 ? true : undefined));
  expect((await lookup()).status).toBe(200);
}
