/**
 * The README's run command: `npm start` on a fresh data folder builds the exports, starts the
 * runner and the API, prints a working demo key, and stops cleanly on SIGTERM.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';

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
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('npm start', () => {
  it('serves the API on embedded defaults with a demo key, then stops on SIGTERM', async () => {
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
    for (let i = 0; i < 600 && !output.includes('is running'); i++) await new Promise((r) => setTimeout(r, 100));
    expect(output).toContain(`API            http://127.0.0.1:${port}`);

    const key = /Bearer (service_[0-9A-Za-z]{40,})/.exec(output)?.[1];
    expect(key).toBeDefined();
    const usage = await fetch(`http://127.0.0.1:${port}/api/v1/auth/usage`, { headers: { Authorization: `Bearer ${key}` } });
    expect(usage.status).toBe(200);
    expect(await usage.json()).toMatchObject({ account_state: 'authenticated' });
    expect((await fetch(`http://127.0.0.1:${runner}/readyz`)).status).toBe(200);

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
