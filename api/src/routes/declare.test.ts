/**
 * The one route declaration: what cannot work is refused when declared, and a public route the
 * dashboard also calls is reused behind the session by its declaration, not by rewriting its path.
 */
import { describe, expect, it } from '@jest/globals';
import type { RequestHandler } from 'express';
import { API_V1, type RouteDeclaration, SESSION_ROOT, behindSession, declareRoute, resolveRoute } from './declare.ts';

const answer: RequestHandler = (_req, res) => void res.end();
const doc = { path: '/things/{id}', operationId: 'getThing', summary: 'A thing', tag: 'Things', auth: 'key', responses: {}, errors: [] } as const;
const publicRoute: RouteDeclaration<unknown> = {
  method: 'get',
  visibility: 'public',
  base: API_V1,
  path: '/things/:id',
  alsoBehindSession: true,
  style: 'flat',
  queryToken: true,
  doc,
  handler: () => answer,
};

describe('declareRoute', () => {
  it('refuses a RegExp path without a label for metrics and logs', () => {
    expect(() => declareRoute({ method: 'get', visibility: 'public', path: /^\/x$/, style: 'plain', handler: () => answer })).toThrow('needs a label');
  });

  it('refuses the key-only flags on a session or internal route', () => {
    expect(() => declareRoute({ method: 'get', visibility: 'session', path: '/x', style: 'flat', queryToken: true, handler: () => answer })).toThrow('for public routes');
    expect(() => declareRoute({ method: 'get', visibility: 'internal', path: '/x', style: 'plain', alsoBehindSession: true, handler: () => answer })).toThrow('for public routes');
  });

  it('refuses sessionless on a route that is not a session route', () => {
    expect(() => declareRoute({ method: 'post', visibility: 'public', path: '/x', style: 'flat', sessionless: true, handler: () => answer })).toThrow('only a session route');
  });

  it('returns a route it accepts as declared', () => {
    expect(declareRoute(publicRoute)).toBe(publicRoute);
  });
});

describe('resolveRoute and behindSession', () => {
  it('mount a public route under its base, with its documented path', () => {
    const resolved = resolveRoute(publicRoute);
    expect([resolved.path, resolved.doc?.path, resolved.base]).toEqual(['/api/v1/things/:id', '/api/v1/things/{id}', undefined]);
  });

  it('reuse the same declaration behind the session: its path below the session root, its schemas and handler, no key-only flags', () => {
    const copy = resolveRoute(behindSession(publicRoute));
    expect(copy.visibility).toBe('session');
    expect([copy.path, copy.doc?.path, copy.doc?.operationId]).toEqual(['/things/:id', `${SESSION_ROOT}/things/{id}`, 'dashboardGetThing']);
    expect(copy.handler).toBe(publicRoute.handler);
    expect([copy.queryToken, copy.alsoBehindSession]).toEqual([undefined, undefined]);
  });
});
