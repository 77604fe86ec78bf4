/**
 * The `npm run export` command as the CronJob runs it: exit codes, messages, and the outcome it
 * pushes to a real Prometheus Pushgateway (Debian's prometheus-pushgateway).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { seriesValue } from '@uda/test-support/metrics';

const ROOT = join(import.meta.dirname, '..', '..');
const NODE = join(ROOT, 'node_modules', '.bin', 'node');
const PUSHGATEWAY = '/usr/bin/prometheus-pushgateway';

let scratch: string;
let gateway: ChildProcess;
let gatewayUrl: string;

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

function runExporter(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(NODE, [join(ROOT, 'exporter/src/main.ts')], { env: { PATH: process.env.PATH, ...env } });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.resume();
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

async function gatewayMetrics(): Promise<string> {
  return (await fetch(`${gatewayUrl}/metrics`)).text();
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'uda-export-cli-'));
  const port = await freePort();
  gateway = spawn(PUSHGATEWAY, [`--web.listen-address=127.0.0.1:${port}`], { stdio: 'ignore' });
  gatewayUrl = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (await fetch(`${gatewayUrl}/-/ready`).then((r) => r.ok, () => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${PUSHGATEWAY} did not start (install Debian's prometheus-pushgateway; .ci/run does)`);
});

afterAll(async () => {
  gateway.kill();
  await rm(scratch, { recursive: true, force: true });
});

describe('npm run export', () => {
  it('exits 1 with a message naming the bad setting', async () => {
    const { code, stderr } = await runExporter({ DATA_DIR: join(scratch, 'bad-config'), EXPORT_KEEP_VERSIONS: 'three' });
    expect(code).toBe(1);
    expect(stderr).toContain('Invalid configuration');
    expect(stderr).toContain('EXPORT_KEEP_VERSIONS');
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it('publishes into the local folder store and pushes its success', async () => {
    const dataDir = join(scratch, 'ok');
    const started = Date.now() / 1000;
    const { code } = await runExporter({ DATA_DIR: dataDir, EXPORT_PUSHGATEWAY_URL: gatewayUrl, LOG_LEVEL: 'warn' });
    const ended = Date.now() / 1000;
    expect(code).toBe(0);
    const manifest = JSON.parse(await readFile(join(dataDir, 'objects/exports/manifest.json'), 'utf8')) as { tables: Record<string, { rows: number }> };
    expect(manifest.tables.gutenberg!.rows).toBe(1823);
    const metrics = await gatewayMetrics();
    const job = { job: 'uda-exporter' };
    // The success time is the end of this very run; the duration is some part of it.
    const succeededAt = seriesValue(metrics, 'uda_exporter_last_success_timestamp_seconds', job);
    expect(succeededAt).toBeGreaterThanOrEqual(Math.floor(started));
    expect(succeededAt).toBeLessThanOrEqual(Math.ceil(ended));
    const duration = seriesValue(metrics, 'uda_exporter_duration_seconds', job);
    expect(duration).toBeGreaterThan(0);
    expect(duration).toBeLessThanOrEqual(ended - started);
    expect(seriesValue(metrics, 'uda_exporter_rows', { ...job, table: 'gutenberg' })).toBe(1823);
  });

  it('exits 1 naming the file and line of bad input, and pushes the failure without losing the success', async () => {
    const input = join(scratch, 'corrupt');
    await cp(join(ROOT, 'exporter/data'), input, { recursive: true });
    const sec = join(input, 'sec/master.20200103.idx');
    await writeFile(sec, `${await readFile(sec, 'utf8')}1000229|TRUNCATED ROW\n`);
    const { code, stderr } = await runExporter({
      DATA_DIR: join(scratch, 'ok'),
      EXPORT_INPUT_DIR: input,
      EXPORT_PUSHGATEWAY_URL: gatewayUrl,
      LOG_LEVEL: 'silent',
    });
    expect(code).toBe(1);
    expect(stderr).toContain('export failed: sec/master.20200103.idx:3008: expected 5 fields, found 2');
    const metrics = await gatewayMetrics();
    const job = { job: 'uda-exporter' };
    expect(seriesValue(metrics, 'uda_exporter_last_failure_timestamp_seconds', job)).toBeGreaterThan(seriesValue(metrics, 'uda_exporter_last_success_timestamp_seconds', job));
    expect(seriesValue(metrics, 'uda_exporter_last_success_timestamp_seconds', job)).toBeGreaterThan(0);
  });
});
