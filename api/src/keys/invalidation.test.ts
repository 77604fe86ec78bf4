import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_ENCRYPTION_KEY, TEST_PEPPER, TEST_REDIS_URL, type TestContext, openTestContext, uniquePrefix } from '@uda/test-support/api-harness';
import { startNode, stopNode } from '../../test/support/spawn.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await openTestContext();
});
afterAll(async () => {
  await ctx.close();
});

const ADMIN_TOKEN = 'invalidation-test-admin-token'.padEnd(40, 'x');

/** Two real API processes on one PostgreSQL and Redis, trusting a cached key for 5 minutes. */
async function startTwoPods() {
  const env = {
    DATABASE_URL: ctx.database.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: uniquePrefix(),
    KEY_PEPPER: TEST_PEPPER,
    KEY_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    ADMIN_TOKEN,
    KEY_CACHE_TTL_MS: '300000',
    PORT: '0',
    METRICS_PORT: '0',
    ADMIN_PORT: '0',
    LOG_LEVEL: 'info',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'uda-keys-')),
  };
  const main = join(process.cwd(), 'api/src/main.ts');
  const isReady = (line: string) => line.includes('"api listening"');
  const [a, b] = await Promise.all([startNode(main, env, isReady), startNode(main, env, isReady)]);
  const urls = (line: string) => JSON.parse(line) as { url: string; adminUrl: string };
  return { a: { ...urls(a.line), child: a.child }, b: { ...urls(b.line), child: b.child } };
}

async function admin(adminUrl: string, method: string, path: string, body?: object): Promise<Record<string, string>> {
  const res = await fetch(`${adminUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  expect(res.status).toBeLessThan(300);
  return (await res.json()) as Record<string, string>;
}

/** The key-required SQL route: 401 for a refused key, a 400 (no `sql`) for an accepted one. */
const sqlStatus = async (url: string, key: string) =>
  (await fetch(`${url}/api/v1/query.csv`, { headers: { authorization: `Bearer ${key}` } })).status;

/** Polls (never asserting how long it takes) until `url` refuses `key`, or gives up after 10 s. */
async function refusedEventually(url: string, key: string): Promise<boolean> {
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
    if ((await sqlStatus(url, key)) === 401) return true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}

describe('key invalidation across pods', () => {
  it('a key revoked or replaced through one API process is refused by the other, which had it cached', async () => {
    const { a, b } = await startTwoPods();
    try {
      const created = await admin(a.adminUrl, 'POST', '/admin/accounts', { email: 'pods@example.com', tier: 'free' });
      const [accountId, first] = [created.account_id as string, created.api_key as string];
      expect(await sqlStatus(b.url, first)).toBe(400);

      // Replace: creating a key deactivates the previous one.
      const second = (await admin(a.adminUrl, 'POST', `/admin/accounts/${accountId}/keys`, { name: 'rotated' })).api_key as string;
      expect(await refusedEventually(b.url, first)).toBe(true);
      expect(await sqlStatus(b.url, second)).toBe(400);

      await admin(a.adminUrl, 'DELETE', `/admin/accounts/${accountId}/keys/active`);
      expect(await refusedEventually(b.url, second)).toBe(true);
    } finally {
      await Promise.all([stopNode(a.child), stopNode(b.child)]);
    }
  });
});
