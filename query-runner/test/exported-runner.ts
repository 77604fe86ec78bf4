/**
 * Test support: a runner serving a database the real exporter built from the sample data (run as
 * its CLI, so the workspaces stay independent), for the lookup tests.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lookupResponseSchema, type LookupResponse } from '@uda/shared/runner-contract';
import { redisPrefix, startInProcess } from './harness.ts';
import type { StartedRunner } from '../src/runner.ts';

const ROOT = join(import.meta.dirname, '..', '..');

export interface ExportedRunner {
  readonly runner: StartedRunner;
  /** `POST /v1/lookups` with any body: the status and the parsed JSON. */
  lookup(body: unknown): Promise<{ status: number; body: unknown }>;
  /** A lookup that must succeed, parsed with the contract's schema. */
  ok(source: string, keywords: string, limit?: number): Promise<LookupResponse>;
  stop(): Promise<void>;
}

export async function startExportedRunner(name: string): Promise<ExportedRunner> {
  const dataDir = await mkdtemp(join(tmpdir(), `uda-${name}-`));
  const exported = spawnSync(join(ROOT, 'node_modules/.bin/node'), [join(ROOT, 'exporter/src/main.ts')], {
    env: { PATH: process.env.PATH, DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
    encoding: 'utf8',
  });
  if (exported.status !== 0) throw new Error(`export failed: ${exported.stderr}`);
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
    const res = await fetch(`${runner.url}/v1/lookups`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
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
    async stop() {
      await runner.shutdown(0);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
