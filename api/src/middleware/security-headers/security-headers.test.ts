import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import express, { type RequestHandler } from 'express';
import helmet from 'helmet';
import { type TestContext, openTestContext } from '@uda/test-support/api-harness';
import { listen } from '../../server.ts';
import { SECURITY_HEADERS, securityHeaders } from './index.ts';

/** The headers an app with only `headers` in front of a JSON answer sends, minus the ones every answer has. */
async function headersOf(headers: RequestHandler): Promise<Record<string, string>> {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(headers);
  app.get('/', (_req, res) => void res.json({}));
  const server = await listen(app, 0, '127.0.0.1');
  try {
    const res = await fetch(server.url);
    const all = Object.fromEntries(res.headers);
    for (const common of ['date', 'connection', 'keep-alive', 'content-type', 'content-length']) delete all[common];
    return all;
  } finally {
    await server.close();
  }
}

let ctx: TestContext;
beforeAll(async () => {
  ctx = await openTestContext();
});
afterAll(async () => {
  await ctx.close();
});

describe('security headers', () => {
  it('are exactly the ones helmet sends with the API policy: strictest CSP, cross-origin readable', async () => {
    const viaHelmet = await headersOf(
      helmet({
        contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
        crossOriginResourcePolicy: { policy: 'cross-origin' },
      }),
    );
    const ours = await headersOf(securityHeaders());
    expect(ours).toEqual(viaHelmet);
    expect(ours).toEqual(Object.fromEntries(SECURITY_HEADERS.map(([name, value]) => [name.toLowerCase(), value])));
    expect(ours['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none'");
    expect(ours['x-powered-by']).toBeUndefined();
  });

  it('are on every answer of the API: a success, a 401, an unknown path; the dashboard keeps its own CSP', async () => {
    const api = await ctx.start();
    const { apiKey } = await api.account();
    const answers = [await api.get('/api/v1/auth/usage', { key: apiKey }), await api.get('/api/v1/export/gutenberg'), await api.get('/no/such/path/here')];
    expect(answers.map((res) => res.status)).toEqual([200, 401, 404]);
    for (const res of answers) {
      for (const [name, value] of SECURITY_HEADERS) expect(res.headers.get(name)).toBe(value);
    }
    const dashboard = await api.get('/dashboard/');
    expect(dashboard.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(dashboard.headers.get('cross-origin-resource-policy')).toBe('same-origin');
    await api.close();
  });
});
