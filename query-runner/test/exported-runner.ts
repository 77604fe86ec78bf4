/**
 * Test support: a runner serving a database the real exporter built from the sample data (run as
 * its CLI, so the workspaces stay independent), for the lookup tests.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MANIFEST_KEY, manifestSchema } from '@uda/shared/manifest';
import { lookupResponseSchema, type LookupResponse } from '@uda/shared/runner-contract';
import { RUNNER_AUTH, redisPrefix, startInProcess } from '@uda/test-support/runner-harness';
import type { StartedRunner } from '../src/runner.ts';

const ROOT = join(import.meta.dirname, '..', '..');

export interface ExportedRunner {
  readonly runner: StartedRunner;
  /** `POST /v1/lookups` with any body: the status and the parsed JSON. */
  lookup(body: unknown): Promise<{ status: number; body: unknown }>;
  /** A lookup that must succeed, parsed with the contract's schema. */
  ok(source: string, keywords: string, limit?: number): Promise<LookupResponse>;
  /** Runs the exporter again: it publishes a new version, which the runner swaps in. */
  exportAgain(): Promise<void>;
  stop(): Promise<void>;
}

/** The real exporter CLI over the sample data, publishing a new version into `dataDir`'s store. */
async function exportSamples(dataDir: string): Promise<void> {
  await promisify(execFile)(join(ROOT, 'node_modules/.bin/node'), [join(ROOT, 'exporter/src/main.ts')], {
    env: { PATH: process.env.PATH, DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
    encoding: 'utf8',
  });
}

/** Makes the current export look like one built before the runner files existed: its manifest does not list them. */
async function forgetRunnerFiles(dataDir: string): Promise<void> {
  const path = join(dataDir, 'objects', MANIFEST_KEY);
  const { runner_files: _runnerFiles, ...manifest } = manifestSchema.parse(JSON.parse(await readFile(path, 'utf8')));
  await writeFile(path, JSON.stringify(manifest));
}

export interface ExportedRunnerOptions {
  /** False: the runner is given an export without the runner files (an older exporter's), so it builds the index itself. */
  readonly runnerFiles?: boolean;
}

export async function startExportedRunner(name: string, { runnerFiles = true }: ExportedRunnerOptions = {}): Promise<ExportedRunner> {
  const dataDir = await mkdtemp(join(tmpdir(), `uda-${name}-`));
  await exportSamples(dataDir);
  if (!runnerFiles) await forgetRunnerFiles(dataDir);
  const runner = await startInProcess({
    DATA_DIR: dataDir,
    REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    REDIS_KEY_PREFIX: redisPrefix(name),
    RUNNER_PORT: '0',
    MANIFEST_POLL_MS: '100',
    LOG_LEVEL: 'silent',
  });
  for (let i = 0; i < 200 && !runner.databases.ready; i++) await new Promise((r) => setTimeout(r, 50));

  async function lookup(body: unknown): Promise<{ status: number; body: unknown }> {
    const res = await fetch(`${runner.url}/v1/lookups`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...RUNNER_AUTH }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  }
  return {
    runner,
    lookup,
    async ok(source, keywords, limit = 10) {
      const { status, body } = await lookup({ source, keywords, limit });
      if (status !== 200) throw new Error(`lookup ${source} "${keywords}": ${status} ${JSON.stringify(body)}`);
      return lookupResponseSchema.parse(body);
    },
    exportAgain: () => exportSamples(dataDir),
    async stop() {
      await runner.shutdown(0);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
