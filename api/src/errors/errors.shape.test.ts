/**
 * Every error body and header set the gateway answers with, field by field against SPEC "Errors"
 * and DECISIONS §4 (STYLE §3: "a test checks every error body against the spec"). The 405 is in
 * mcp/mcp.405.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type TestContext, openTestContext } from '@uda/test-support/api-harness';
import { testRoutes } from '../../test/support/test-routes.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await openTestContext();
});
afterAll(async () => {
  await ctx.close();
});

const json = async (res: Response) => ({ status: res.status, type: res.headers.get('content-type'), body: await res.json() });

describe('error shapes', () => {
  it('401 export/SQL: flat body with the exact message', async () => {
    const api = await ctx.start({ extraRoutes: testRoutes });
    const res = await json(await api.get('/test/export'));
    expect(res.status).toBe(401);
    expect(res.type).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      status: 'error',
      message: 'Authentication required. Include your API key in the Authorization header.',
    });
    await api.close();
  });

  it('401 connected sheet: {error:"Unauthorized", message:"No token provided"}, also for a revoked key', async () => {
    const api = await ctx.start({ extraRoutes: testRoutes });
    const { accountId, apiKey } = await api.account();
    await api.services.keys.revoke(accountId);
    for (const res of [await api.get('/test/sheet'), await api.get('/test/sheet', { key: apiKey })]) {
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: 'Unauthorized', message: 'No token provided' });
    }
    await api.close();
  });

  it('402 up front at zero balance, lookup envelope, nothing charged', async () => {
    const api = await ctx.start({ extraRoutes: testRoutes });
    const { apiKey } = await api.account({ usd: '0' });
    const res = await api.get('/test/lookup/x?rows=1', { key: apiKey });
    expect(res.status).toBe(402);
    expect(res.headers.get('x-credit-cost')).toBe('0');
    expect(res.headers.get('x-credits-remaining')).toBe('0');
    expect(await res.json()).toEqual({
      status: 'error',
      error: 'insufficient_credit',
      message: expect.any(String),
      account_state: 'authenticated',
      data: { error: expect.any(String), code: 'INSUFFICIENT_CREDIT' },
      credits: { remaining_usd: 0, request_cost_usd: 0 },
    });
    await api.close();
  });

  it('402 after the result when it costs more than the balance, flat shape, no charge', async () => {
    const api = await ctx.start({ extraRoutes: testRoutes });
    const { accountId, apiKey } = await api.account({ usd: '0.05' });
    const res = await api.get('/test/export?cost=60000', { key: apiKey });
    expect(res.status).toBe(402);
    expect(res.headers.get('x-credit-cost')).toBe('0');
    expect(res.headers.get('x-credits-remaining')).toBe('0.05');
    expect(await res.json()).toEqual({
      status: 'error',
      error: 'insufficient_credit',
      message: expect.any(String),
      credits: { remaining_usd: 0.05, request_cost_usd: 0.06 },
    });
    expect(await api.services.billing.balance(accountId)).toBe(50_000);
    await api.close();
  });

  it('404 unknown path: {error:"Not Found", message}, without echoing the query string', async () => {
    const api = await ctx.start();
    const res = await api.get('/no/such/path?token=service_secret');
    expect(res.status).toBe(404);
    const body = await res.json();
    expect(body).toEqual({ error: 'Not Found', message: 'Cannot GET /no/such/path' });
    expect(JSON.stringify(body)).not.toContain('secret');
    await api.close();
  });

  it('429 burst: DECISIONS §4 JSON body, RateLimit-* and Retry-After; text/plain when preferred', async () => {
    const api = await ctx.start({ limits: { burst: { points: 3, windowS: 900 } } });
    for (let i = 0; i < 3; i++) expect((await api.get('/api/v1/auth/usage')).status).toBe(200);
    const res = await api.get('/api/v1/auth/usage');
    expect(res.status).toBe(429);
    expect(res.headers.get('ratelimit-limit')).toBe('3');
    expect(res.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(res.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    expect(res.headers.get('retry-after')).toBe(res.headers.get('ratelimit-reset'));
    expect(await res.json()).toEqual({
      status: 'error',
      error: 'Too many requests',
      message: 'Too many requests from this IP, please try again later.',
      data: { error: 'Too many requests from this IP, please try again later.', code: 'RATE_LIMITED' },
    });
    const text = await api.get('/api/v1/auth/usage', { headers: { accept: 'text/plain' } });
    expect(text.status).toBe(429);
    expect(text.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await text.text()).toBe('Too many requests from this IP, please try again later.');
    expect(text.headers.get('retry-after')).toBeTruthy();
    await api.close();
  });

  it('429 anonymous: REQUEST_LIMIT_EXCEEDED with limit, remaining, hint and X-RateLimit-*', async () => {
    const api = await ctx.start({ extraRoutes: testRoutes });
    for (let i = 0; i < 50; i++) expect((await api.get('/test/lookup/x')).status).toBe(200);
    const res = await api.get('/test/lookup/x');
    expect(res.status).toBe(429);
    expect(res.headers.get('x-ratelimit-limit')).toBe('50');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(res.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
    expect(await res.json()).toEqual({
      status: 'error',
      error: 'REQUEST_LIMIT_EXCEEDED',
      account_state: 'anonymous',
      message: expect.any(String),
      limit: 50,
      remaining: 0,
      hint: expect.stringContaining('Authorization'),
    });
    await api.close();
  });

  it('429 export/SQL daily cap: exact message, RateLimit-* and Retry-After', async () => {
    const api = await ctx.start({ extraRoutes: testRoutes, limits: { exportDaily: 2 } });
    const { apiKey } = await api.account();
    for (let i = 0; i < 2; i++) {
      const ok = await api.get('/test/export', { key: apiKey });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('ratelimit-remaining')).toBe(String(1 - i));
    }
    const res = await api.get('/test/export', { key: apiKey });
    expect(res.status).toBe(429);
    expect(res.headers.get('ratelimit-limit')).toBe('2');
    expect(res.headers.get('ratelimit-remaining')).toBe('0');
    const reset = Number(res.headers.get('ratelimit-reset'));
    expect(reset).toBeGreaterThan(0);
    expect(reset).toBeLessThanOrEqual(86_400);
    expect(res.headers.get('retry-after')).toBe(String(reset));
    expect(await res.json()).toEqual({
      status: 'error',
      message: 'Export rate limit exceeded. Maximum 1,000 exports per day per account.',
    });
    await api.close();
  });

  it('429 connected-sheet daily cap: flat body, RateLimit-* and Retry-After', async () => {
    const api = await ctx.start({ extraRoutes: testRoutes, limits: { sheetDaily: 1 } });
    const { apiKey } = await api.account();
    expect((await api.get('/test/sheet', { key: apiKey })).status).toBe(200);
    const res = await api.get('/test/sheet', { key: apiKey });
    expect(res.status).toBe(429);
    expect(res.headers.get('ratelimit-limit')).toBe('1');
    expect(res.headers.get('retry-after')).toBeTruthy();
    expect(await res.json()).toEqual({ status: 'error', message: expect.stringContaining('Maximum 1,000') });
    await api.close();
  });

  it('500 never leaks internal text: flat {error:{message}} and the lookup INTERNAL_ERROR envelope', async () => {
    const api = await ctx.start({ extraRoutes: testRoutes });
    const { apiKey, accountId } = await api.account();
    const flat = await api.get('/test/export?fail=500', { key: apiKey });
    expect(flat.status).toBe(500);
    expect(flat.headers.get('x-request-id')).toBeTruthy();
    expect(await flat.json()).toEqual({ error: { message: 'Internal Server Error' } });
    const lookup = await api.get('/test/lookup/x?fail=500', { key: apiKey });
    expect(lookup.status).toBe(500);
    const body = await lookup.json();
    expect(body).toEqual({
      status: 'error',
      account_state: 'authenticated',
      data: { error: expect.any(String), code: 'INTERNAL_ERROR' },
    });
    expect(JSON.stringify(body)).not.toContain('secret');
    // Errors are never billed.
    expect(await api.services.billing.balance(accountId)).toBe(5_000_000);
    await api.close();
  });
});
