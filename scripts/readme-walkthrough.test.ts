/**
 * Examples that cannot drift: every fenced `sh` block of the README's walkthrough runs, in order and
 * in one shell, against a service started by the walkthrough's own `npm start` block (on free ports
 * and a fresh data folder; the blocks' `127.0.0.1:8080` is pointed at it).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';

const ROOT = join(import.meta.dirname, '..');
const WALKTHROUGH_FILES = ['result.parquet', 'gutenberg.parquet'].map((f) => join(ROOT, f));

/** The `sh` blocks between `## Five-minute walkthrough` and the next `## ` heading. */
function walkthroughBlocks(readme: string): string[] {
  const start = readme.indexOf('\n## Five-minute walkthrough');
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.trim());
}

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function run(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const child = spawn('bash', ['-c', script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

let dataDir: string | undefined;
let stopService: (() => Promise<void>) | undefined;
afterAll(async () => {
  await stopService?.();
  // The service's processes may still store their last files (the usage log on SIGTERM) after the shell exits.
  if (dataDir) await rm(dataDir, { recursive: true, force: true, maxRetries: 20, retryDelay: 250 });
  for (const file of WALKTHROUGH_FILES) await rm(file, { force: true });
});

describe('README walkthrough', () => {
  it('every sh block runs as written against a started service', async () => {
    const blocks = walkthroughBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    expect(blocks[0]).toBe('npm start');
    expect(blocks.length).toBeGreaterThanOrEqual(6);

    dataDir = await mkdtemp(join(tmpdir(), 'uda-walkthrough-'));
    const [port, metrics, admin, runner] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATA_DIR: dataDir,
      PORT: String(port),
      METRICS_PORT: String(metrics),
      ADMIN_PORT: String(admin),
      RUNNER_PORT: String(runner),
      LOG_LEVEL: 'warn',
    };

    // Block 1 starts the service; it runs until the test stops its process group.
    const service = spawn('bash', ['-c', blocks[0]!], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let serviceOutput = '';
    service.stdout!.on('data', (chunk: Buffer) => (serviceOutput += chunk.toString()));
    service.stderr!.on('data', (chunk: Buffer) => (serviceOutput += chunk.toString()));
    const exited = new Promise((resolve) => service.once('exit', resolve));
    stopService = async () => {
      process.kill(-service.pid!, 'SIGTERM');
      await exited;
      stopService = undefined;
    };
    for (let i = 0; i < 1200 && !serviceOutput.includes('is running'); i++) await new Promise((r) => setTimeout(r, 100));
    expect(serviceOutput).toContain('is running');

    // The other blocks, in one shell so `export`s carry over; each stops the run on failure.
    const script = blocks
      .slice(1)
      .map((block, i) => `echo "=== block ${i + 2}"\n${block.replaceAll('http://127.0.0.1:8080', `http://127.0.0.1:${port}`)}`)
      .join('\n');
    const { code, output } = await run(`set -euo pipefail\n${script}\necho "=== done"`, env);
    expect({ code, tail: output.slice(-3000) }).toEqual({ code: 0, tail: expect.stringContaining('=== done') });

    // What the blocks showed: an authenticated usage answer, a billed lookup, rows, DuckDB counts, the MCP tools.
    expect(output).toContain('"account_state":"authenticated"');
    expect(output).toMatch(/x-credit-cost: 0\.\d+/i);
    expect(output).toContain('The Art of War');
    expect(output).toContain('{"row_count":"3"}');
    expect(output).toMatch(/\{"books":"\d+"\}/);
    for (const tool of ['search_service', 'list_sources', 'run_sql']) expect(output).toContain(tool);

    await stopService();
  }, 240_000);
});
