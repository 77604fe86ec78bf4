import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type TestContext, openTestContext } from '@uda/test-support/api-harness';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await openTestContext();
});
afterAll(async () => {
  await ctx.close();
});

describe('/mcp', () => {
  it('answers 405 with Allow: POST to GET and DELETE (stateless, POST-only)', async () => {
    const api = await ctx.start();
    for (const method of ['GET', 'DELETE']) {
      const res = await api.get('/mcp', { method });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(res.headers.get('x-request-id')).toBeTruthy();
      expect(await res.json()).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null });
    }
    await api.close();
  });
});
