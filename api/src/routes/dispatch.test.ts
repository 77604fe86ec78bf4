import { describe, expect, it } from '@jest/globals';
import express, { type Express, type RequestHandler } from 'express';
import { listen } from '../server.ts';
import { API_ROUTES } from './table.ts';
import { byFirstSegment, literalFirstSegment } from './dispatch.ts';

/** A handler that answers which route matched, and the params Express read for it. */
function answerWith(index: number): RequestHandler {
  return (req, res) => void res.json({ route: index, params: req.params });
}

/** The public routes plus a few more shapes around them, each answering its index. */
const ROUTES = [
  { method: 'get' as const, path: '/Mixed.Case/:x', index: 100 },
  { method: 'get' as const, path: '/:any', index: 101 },
  ...API_ROUTES.map((route, index) => ({ method: route.method, path: route.path, index })),
  { method: 'get' as const, path: '/docs/:page', index: 102 },
];

/** What each app answers to each request, as text. */
async function answers(app: Express, requests: readonly (readonly [string, string])[]): Promise<string[]> {
  app.use((_req, res) => void res.status(404).json({ route: 'none' }));
  const server = await listen(app, 0, '127.0.0.1');
  try {
    const out: string[] = [];
    for (const [method, path] of requests) {
      const res = await fetch(`${server.url}${path}`, { method, redirect: 'manual' });
      out.push(`${method} ${path} → ${res.status} ${await res.text()}`);
    }
    return out;
  } finally {
    await server.close();
  }
}

describe('dispatch by first path segment', () => {
  it('finds the same route, with the same params, as one router walking the whole list in order', async () => {
    const requests: [string, string][] = [
      ['GET', '/api/v1/auth/usage'],
      ['GET', '/API/V1/Auth/Usage'],
      ['GET', '/api/v1/auth/usage/'],
      ['HEAD', '/api/v1/query.csv?sql=x'],
      ['POST', '/api/v1/query'],
      ['GET', '/api/v1/export/gutenberg'],
      ['GET', '/api/v1/datasets/abc/search?q=1'],
      ['DELETE', '/api/v1/datasets/abc'],
      ['GET', '/api/v1'],
      ['GET', '/api/x'],
      ['GET', '/%61pi/v1/auth/usage'],
      ['GET', '/mcp'],
      ['GET', '/MCP/'],
      ['GET', '/mcp/x'],
      ['GET', '/docs'],
      ['GET', '/docs/init.js'],
      ['GET', '/docs/other'],
      ['GET', '/books/the%20art%20of%20war'],
      ['GET', '/Books/war/'],
      ['GET', '/https://en.wikipedia.org/wiki/Alan_Turing'],
      ['GET', '/mixed.case/1'],
      ['GET', '/MIXED.CASE/1'],
      ['GET', '/solo'],
      ['GET', '/'],
      ['GET', '//books/war'],
      ['GET', '/k\u212Aapi/x'],
      ['GET', '/a/b/c'],
    ];
    const whole = express();
    const router = express.Router();
    for (const route of ROUTES) router[route.method](route.path, answerWith(route.index));
    whole.use(router);
    const dispatched = express();
    dispatched.use(byFirstSegment(ROUTES, (r, route) => void r[route.method](route.path, answerWith(route.index))));
    const expected = await answers(whole, requests);
    expect(await answers(dispatched, requests)).toEqual(expected);
    // The comparison means something only if the requests reach many routes, not one 404.
    expect(new Set(expected.map((line) => /"route":(\d+)/.exec(line)?.[1])).size).toBeGreaterThanOrEqual(10);
  });

  it('takes a literal first segment case-insensitively, and anything with a parameter or a RegExp as any segment', () => {
    expect(literalFirstSegment('/api/v1/query')).toBe('api');
    expect(literalFirstSegment('/Docs')).toBe('docs');
    expect(literalFirstSegment('/:source/:keywords')).toBeUndefined();
    expect(literalFirstSegment('/*splat')).toBeUndefined();
    expect(literalFirstSegment('/{optional}/x')).toBeUndefined();
    expect(literalFirstSegment(/^\/https:\/.+/)).toBeUndefined();
    expect(literalFirstSegment('/')).toBeUndefined();
  });
});
