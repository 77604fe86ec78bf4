import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  TEST_ENCRYPTION_KEY,
  TEST_PEPPER,
  TEST_REDIS_URL,
  type TestContext,
  openTestContext,
  uniquePrefix,
} from '@uda/test-support/api-harness';
import { freePort, startNode, stopNode } from '../../../test/support/spawn.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await openTestContext();
});
afterAll(async () => {
  await ctx.close();
});

describe('burst limit', () => {
  it('is shared by two API processes through Redis, and keys never reach the logs', async () => {
    const prefix = uniquePrefix();
    const env = {
      DATABASE_URL: ctx.database.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: prefix,
      KEY_PEPPER: TEST_PEPPER,
      KEY_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      PORT: '0',
      METRICS_PORT: '0',
      ADMIN_PORT: '0',
      LOG_LEVEL: 'info',
      DATA_DIR: mkdtempSync(join(tmpdir(), 'uda-burst-')),
    };
    const main = join(process.cwd(), 'api/src/main.ts');
    const isReady = (line: string) => line.includes('"api listening"');
    const [a, b] = await Promise.all([startNode(main, env, isReady), startNode(main, env, isReady)]);
    try {
      const urlOf = (line: string) => (JSON.parse(line) as { url: string }).url;
      const [urlA, urlB] = [urlOf(a.line), urlOf(b.line)];
      const api = await ctx.start();
      const { apiKey } = await api.account();
      await api.close();
      const statuses: number[] = [];
      for (let i = 0; i < 100; i++) {
        const url = i % 2 ? `${urlB}/api/v1/auth/usage` : `${urlA}/no-such-route?token=${apiKey}`;
        statuses.push((await fetch(url, { headers: { authorization: `Bearer ${apiKey}` } })).status);
      }
      expect(statuses.filter((s) => s === 429)).toEqual([]);
      expect((await fetch(`${urlA}/api/v1/auth/usage`)).status).toBe(429);
      expect((await fetch(`${urlB}/api/v1/auth/usage`)).status).toBe(429);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const logs = [...a.lines, ...b.lines].join('\n');
      expect(logs).toContain('token=[redacted]');
      expect(logs).not.toContain(apiKey);
      expect(logs).not.toContain(apiKey.slice(8));
    } finally {
      await Promise.all([stopNode(a.child), stopNode(b.child)]);
    }
  });

  it('keeps limiting with the insurance limiter when Redis stops mid-test, never answering 500', async () => {
    const port = await freePort();
    const redis: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    try {
      await waitForRedis(port);
      const api = await ctx.start({
        config: { REDIS_URL: `redis://127.0.0.1:${port}` },
        memoryLimiters: false,
        limits: { burst: { points: 10, windowS: 900 } },
        useOwnRedis: true,
      });
      const before: number[] = [];
      for (let i = 0; i < 4; i++) before.push((await api.get('/api/v1/auth/usage')).status);
      expect(before).toEqual([200, 200, 200, 200]);
      await stopNode(redis, 'SIGKILL');
      const after: number[] = [];
      for (let i = 0; i < 15; i++) after.push((await api.get('/api/v1/auth/usage')).status);
      expect(after.filter((s) => s !== 200 && s !== 429)).toEqual([]);
      // The insurance limiter starts counting when Redis fails: at most 10 more pass, then 429.
      expect(after.filter((s) => s === 200).length).toBeLessThanOrEqual(10);
      expect(after.at(-1)).toBe(429);
      await api.close();
    } finally {
      await stopNode(redis, 'SIGKILL');
    }
  });
});

async function waitForRedis(port: number): Promise<void> {
  const { Redis } = await import('ioredis');
  for (let attempt = 0; attempt < 50; attempt++) {
    const client = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.ping();
      client.disconnect();
      return;
    } catch {
      client.disconnect();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`redis-server on ${port} did not start`);
}
