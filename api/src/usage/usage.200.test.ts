import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type TestContext, openTestContext } from '@uda/test-support/api-harness';
import { testRoutes } from '../../test/support/test-routes.ts';
import { usageResponse } from './schema.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await openTestContext();
});
afterAll(async () => {
  await ctx.close();
});

describe('GET /api/v1/auth/usage', () => {
  it('reports the anonymous allowance by IP, without counting itself', async () => {
    const api = await ctx.start({ extraRoutes: testRoutes });
    await api.get('/test/lookup/x');
    for (let i = 0; i < 3; i++) {
      const res = await api.get('/api/v1/auth/usage');
      expect(res.status).toBe(200);
      const body = usageResponse.parse(await res.json());
      expect(body).toEqual({ account_state: 'anonymous', usage: { requests_remaining: 49, request_limit: 50 } });
      expect(res.headers.get('x-credits-remaining')).toBeNull();
    }
    await api.close();
  });

  it('reports the export/SQL daily cap and the balance for an account', async () => {
    const api = await ctx.start({ extraRoutes: testRoutes });
    const { apiKey } = await api.account({ tier: 'developer' });
    await api.get('/test/export?cost=250000', { key: apiKey });
    const res = await api.get('/api/v1/auth/usage', { key: apiKey });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ account_state: 'authenticated', usage: { requests_remaining: 999, request_limit: 1000 } });
    expect(res.headers.get('x-credits-remaining')).toBe('28.75');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    await api.close();
  });
});
