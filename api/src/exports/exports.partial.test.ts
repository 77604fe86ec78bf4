/**
 * Bytes delivered count, however they were split (DECISIONS §3), over real HTTP
 * downloads of `service.db` cut part-way by the client: broken downloads and ranges that together
 * delivered half the file leave the charge standing, and so does one download cut near its end.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Stack, ledgerOf, netCharged, openStack } from '@uda/test-support/sql-stack';
import type { TestApi } from '@uda/test-support/api-harness';

let stack: Stack;
beforeAll(async () => {
  stack = await openStack('exportsPartial', { runners: 0 });
}, 120_000);
afterAll(() => stack.close());

/** Starts a download (from `from`, as a resumed download asks) and cuts it once `bytes` have arrived; resolves with the bytes received. */
function cutAfter(url: string, apiKey: string, from: number, bytes: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let received = 0;
    const headers: Record<string, string> = { authorization: `Bearer ${apiKey}` };
    if (from > 0) headers.range = `bytes=${from}-`;
    const req = request(url, { headers }, (res) => {
      if (res.statusCode !== 200 && res.statusCode !== 206) reject(new Error(`status ${res.statusCode}`));
      res.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received < bytes) return;
        res.pause();
        req.destroy();
        resolve(received);
      });
      res.once('end', () => reject(new Error('the download was not cut: it ended first')));
    });
    req.on('error', () => undefined);
    req.end();
  });
}

/** Waits until the newest charge's deliveries are decided (it stands, or its refund is written). */
async function decided(api: TestApi, accountId: string): Promise<string> {
  const prefix = api.services.config.REDIS_KEY_PREFIX;
  for (let i = 0; i < 2_400; i++) {
    const charges = (await ledgerOf(stack.ctx, accountId)).filter((r) => r.kind === 'charge');
    const key = charges.at(-1)?.idempotency_key;
    const state = key ? await stack.ctx.redis.get(`${prefix}dlv-state:${key}`) : null;
    if (state === 'done' || state === 'refunded') return state;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the cut download was never decided');
}

describe('export downloads cut part-way', () => {
  it('a download cut at 30% and resumed by range to 60% is charged once: the broken pieces add up to over half the file', async () => {
    const api = await stack.start();
    const { accountId, apiKey } = await api.account({ tier: 'developer', usd: '10' });
    const url = `${api.url}/api/v1/export/service.db`;
    const size = Number((await api.get('/api/v1/export/service.db', { method: 'HEAD', key: apiKey })).headers.get('content-length'));
    const first = await cutAfter(url, apiKey, 0, Math.floor(size * 0.3));
    await decided(api, accountId);
    await cutAfter(url, apiKey, first, Math.floor(size * 0.3));
    expect(await decided(api, accountId)).toBe('done');
    expect(await netCharged(stack.ctx, accountId)).toBe(1_000_000);
    // The charge stands for the window: the rest of the file is free.
    const rest = await api.get('/api/v1/export/service.db', { key: apiKey });
    expect(rest.headers.get('x-credit-cost')).toBe('0');
    expect(Buffer.from(await rest.arrayBuffer()).length).toBe(size);
    await api.close();
  });

  it('a download cut at 90% is charged, not refunded', async () => {
    const api = await stack.start();
    const { accountId, apiKey } = await api.account({ tier: 'developer', usd: '10' });
    const size = Number((await api.get('/api/v1/export/service.db', { method: 'HEAD', key: apiKey })).headers.get('content-length'));
    await cutAfter(`${api.url}/api/v1/export/service.db`, apiKey, 0, Math.floor(size * 0.9));
    expect(await decided(api, accountId)).toBe('done');
    expect((await ledgerOf(stack.ctx, accountId)).map((r) => r.kind)).toEqual(['charge']);
    await api.close();
  });

  it('a download cut after its first bytes is still refunded', async () => {
    const api = await stack.start();
    const { accountId, apiKey } = await api.account({ tier: 'developer', usd: '10' });
    await cutAfter(`${api.url}/api/v1/export/service.db`, apiKey, 0, 1);
    expect(await decided(api, accountId)).toBe('refunded');
    expect(await netCharged(stack.ctx, accountId)).toBe(0);
    await api.close();
  });
});
