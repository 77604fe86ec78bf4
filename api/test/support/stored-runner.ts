/**
 * A real query-runner child process over a database the real exporter CLI built from the sample
 * data, for tests and benchmarks of the stored-source lookups. The workspaces stay independent: both
 * are started as their own programs.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_RUNNER_TOKEN } from '@uda/test-support/runner-harness';
import { TEST_REDIS_URL, uniquePrefix } from '@uda/test-support/api-harness';
import { runNode, startNode, stopNode } from './spawn.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');

export interface StoredRunner {
  url: string;
  /** The runner's DATA_DIR; an API given the same DATA_DIR reads the same export manifest. */
  dataDir: string;
  close(): Promise<void>;
}

export async function startStoredRunner(env: Record<string, string> = {}): Promise<StoredRunner> {
  const dataDir = await mkdtemp(join(tmpdir(), 'uda-api-lookups-'));
  await runNode(join(ROOT, 'exporter/src/main.ts'), [], { DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  const runnerEnv = {
    DATA_DIR: dataDir,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: uniquePrefix(),
    RUNNER_PORT: '0',
    MANIFEST_POLL_MS: '100',
    LOG_LEVEL: 'silent',
    RUNNER_TOKEN: TEST_RUNNER_TOKEN,
    ...env,
  };
  const { child, line } = await startNode(join(ROOT, 'query-runner/src/main.ts'), runnerEnv, (l) => l.includes('"event":"listening"'));
  const url = (JSON.parse(line) as { url: string }).url;
  await untilReady(url);
  return {
    url,
    dataDir,
    async close() {
      await stopNode(child);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The runner listens before its first database is open; /readyz says when it has one. */
async function untilReady(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const res = await fetch(`${url}/readyz`).catch(() => undefined);
    if (res?.ok) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`query-runner at ${url} never became ready`);
}
