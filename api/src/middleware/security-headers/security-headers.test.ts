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

  it('give way to a header the answer sets itself, sent once with its value, as when they were set one by one', async () => {
    const app = express();
    app.use(securityHeaders());
    app.get('/own-csp', (_req, res) => {
      res.setHeader('Content-Security-Policy', "default-src 'self'");
      res.json({});
    });
    app.get('/write-head', (_req, res) => {
      res.writeHead(200, { 'X-Frame-Options': 'DENY', 'content-type': 'application/json' }).end('{}');
    });
    app.get('/write-head-array', (_req, res) => {
      res.writeHead(200, ['Referrer-Policy', 'origin', 'Content-Type', 'application/json']).end('{}');
    });
    const server = await listen(app, 0, '127.0.0.1');
    try {
      // fetch joins a header sent twice with ", ": equality shows it went out once.
      expect((await fetch(`${server.url}/own-csp`)).headers.get('content-security-policy')).toBe("default-src 'self'");
      const viaWriteHead = await fetch(`${server.url}/write-head`);
      expect(viaWriteHead.headers.get('x-frame-options')).toBe('DENY');
      expect(viaWriteHead.headers.get('x-content-type-options')).toBe('nosniff');
      const viaArray = await fetch(`${server.url}/write-head-array`);
      expect(viaArray.headers.get('referrer-policy')).toBe('origin');
      expect(viaArray.headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');
    } finally {
      await server.close();
    }
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
