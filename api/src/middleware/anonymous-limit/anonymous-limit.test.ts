import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type TestContext, openTestContext } from '@uda/test-support/api-harness';
import { testRoutes } from '../../../test/support/test-routes.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await openTestContext();
});
afterAll(async () => {
  await ctx.close();
});

const remaining = async (api: { get(path: string): Promise<Response> }) =>
  ((await (await api.get('/api/v1/auth/usage')).json()) as { usage: { requests_remaining: number } }).usage.requests_remaining;

describe('anonymous limit', () => {
  it('counts only 2xx answers: failures are given back, never below zero', async () => {
    const api = await ctx.start({ extraRoutes: testRoutes });
    for (let i = 0; i < 5; i++) expect((await api.get('/test/lookup/x?fail=400')).status).toBe(400);
    expect((await api.get('/test/lookup/x?fail=500')).status).toBe(500);
    expect(await remaining(api)).toBe(50);
    const first = await api.get('/test/lookup/x');
    expect(first.headers.get('x-ratelimit-limit')).toBe('50');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('49');
    const reset = Number(first.headers.get('x-ratelimit-reset'));
    expect(reset).toBeGreaterThan(Date.now() / 1000 + 86_000);
    expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 86_400);
    for (let i = 0; i < 49; i++) expect((await api.get('/test/lookup/x')).status).toBe(200);
    expect(await remaining(api)).toBe(0);
    // Refused requests don't push the counter further: still exactly 50 used.
    for (let i = 0; i < 3; i++) expect((await api.get('/test/lookup/x')).status).toBe(429);
    const used = await api.services.counters.anonymous.get('127.0.0.1');
    expect(used?.consumedPoints).toBe(50);
    await api.close();
  });

  it('an error answer arrives with its count already given back, and its headers say so', async () => {
    const api = await ctx.start({ extraRoutes: testRoutes, limits: { anonymous: { points: 2, windowS: 86_400 } } });
    for (let i = 0; i < 3; i++) {
      const failed = await api.get('/test/lookup/x?fail=400');
      expect(failed.status).toBe(400);
      // Read as soon as the answer is in: nothing of this request may still be counted.
      expect((await api.services.counters.anonymous.get('127.0.0.1'))?.consumedPoints ?? 0).toBe(0);
      expect(failed.headers.get('x-ratelimit-remaining')).toBe('2');
    }
    expect((await api.get('/test/lookup/x')).headers.get('x-ratelimit-remaining')).toBe('1');
    await api.close();
  });

  it('leaves authenticated callers alone', async () => {
    const api = await ctx.start({ extraRoutes: testRoutes, limits: { anonymous: { points: 1, windowS: 86_400 } } });
    const { apiKey } = await api.account();
    for (let i = 0; i < 3; i++) {
      const res = await api.get('/test/lookup/x', { key: apiKey });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    }
    await api.close();
  });

  it('keys on req.ip: X-Forwarded-For counts only through the configured proxy hops', async () => {
    const limits = { anonymous: { points: 1, windowS: 86_400 } };
    const direct = await ctx.start({ extraRoutes: testRoutes, limits });
    expect((await direct.get('/test/lookup/x', { headers: { 'x-forwarded-for': '203.0.113.1' } })).status).toBe(200);
    // TRUST_PROXY_HOPS=0: a forged header doesn't buy a fresh allowance.
    expect((await direct.get('/test/lookup/x', { headers: { 'x-forwarded-for': '203.0.113.2' } })).status).toBe(429);
    await direct.close();
    const proxied = await ctx.start({ extraRoutes: testRoutes, limits, config: { TRUST_PROXY_HOPS: '1' } });
    expect((await proxied.get('/test/lookup/x', { headers: { 'x-forwarded-for': '203.0.113.1' } })).status).toBe(200);
    expect((await proxied.get('/test/lookup/x', { headers: { 'x-forwarded-for': '203.0.113.2' } })).status).toBe(200);
    expect((await proxied.get('/test/lookup/x', { headers: { 'x-forwarded-for': '203.0.113.2' } })).status).toBe(429);
    await proxied.close();
  });
});
