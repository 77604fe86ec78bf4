import { describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runNode, startNode, stopNode } from '../test/support/spawn.ts';

const main = join(process.cwd(), 'api/src/main.ts');

describe('node api/src/main.ts', () => {
  it('starts embedded, prints a demo key once, and exits 0 on SIGTERM after draining', async () => {
    const env = { DATA_DIR: mkdtempSync(join(tmpdir(), 'uda-main-')), PORT: '0', METRICS_PORT: '0', ADMIN_PORT: '0', LOG_LEVEL: 'info', SHUTDOWN_GRACE_MS: '2000' };
    // The demo key is printed after the 'api listening' log line.
    const first = await startNode(main, env, (line) => line.includes('Bearer service_'));
    try {
      const [, key, url] = /Bearer (service_[A-Za-z0-9]+)" (http:\/\/[\d.:]+)/.exec(first.line) ?? [];
      const usage = await fetch(`${url}/api/v1/auth/usage`, { headers: { authorization: `Bearer ${key}` } });
      expect(((await usage.json()) as { account_state: string }).account_state).toBe('authenticated');
    } finally {
      expect(await stopNode(first.child, 'SIGTERM')).toBe(0);
    }
    expect(first.lines.join('\n')).toContain('shutting down');
    // Second start on the same data: same database, no new demo key.
    const second = await startNode(main, env, (line) => line.includes('"api listening"'));
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(second.lines.join('\n')).not.toContain('Demo account');
    } finally {
      expect(await stopNode(second.child, 'SIGTERM')).toBe(0);
    }
  });

  it('exits 1 with a clear message on bad config', async () => {
    await expect(runNode(main, [], { PORT: 'abc', DATA_DIR: tmpdir() })).rejects.toThrow(/exited 1: Invalid configuration:\n\s+PORT/);
    await expect(runNode(main, [], { DATABASE_URL: 'postgres://x@127.0.0.1:1/db', DATA_DIR: tmpdir() })).rejects.toThrow(
      /KEY_PEPPER: is required when DATABASE_URL is set/,
    );
  });
});
