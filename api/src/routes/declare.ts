/**
 * The one way to declare a route, public, session or internal alike (STYLE §1): its method and
 * path, its schemas (`doc`), its guards and its handler, and who may call it (`visibility`). The
 * declarations are static, so the OpenAPI document needs no services; their handlers are built
 * from the dependencies each one names (`D`) when the table is mounted (`mount.ts`).
 *
 * | visibility | mounted on | caller |
 * | --- | --- | --- |
 * | `public` | the public port, in the OpenAPI document unless `undocumented` | an API key, or anonymous where the route allows it |
 * | `session` | the public port under `/dashboard/api` | the dashboard's session cookie, CSRF-checked on every change |
 * | `internal` | the admin port | the operator's bearer token |
 */
import type { RequestHandler } from 'express';
import type { ErrorStyle } from '../errors/codes.ts';
import type { RouteDoc } from './types.ts';

export type Visibility = 'public' | 'session' | 'internal';

/** The public API's versioned prefix, a `base` of its routes. */
export const API_V1 = '/api/v1';

/** Where the session routes sit: the session router's mount point (`app.ts`). */
export const SESSION_ROOT = '/dashboard/api';

export interface RouteDeclaration<D = never> {
  readonly method: 'get' | 'post' | 'delete' | 'head' | 'put';
  /**
   * An Express path, below `base` (and below `SESSION_ROOT` for a session route). A RegExp when the
   * route must read its raw, still-encoded path itself.
   */
  readonly path: string | RegExp;
  /** The public prefix `path` and `doc.path` sit under (`/api/v1`): a route also served behind the session drops it there. */
  readonly base?: string;
  readonly visibility: Visibility;
  /** A public route that the dashboard also calls behind its session, with the session's account as the caller. */
  readonly alsoBehindSession?: true;
  /** A session route served without a session (sign-up, sign-in, the email links). */
  readonly sessionless?: true;
  /** A public route left out of the OpenAPI document, and why (an HTML page, its scripts, a test route). */
  readonly undocumented?: string;
  /** The route's template in metrics and logs; required in spirit for a RegExp path (default: `path`). */
  readonly label?: string;
  /** Body shape of shared error codes (402, 500) on this route. */
  readonly style: ErrorStyle;
  /** Accept the key as `?token=` (SPEC Authentication §2 lists the routes). */
  readonly queryToken?: boolean;
  /**
   * The route's handler takes the burst count itself, in its first Redis call (the SQL routes: with
   * the re-read marker, DECISIONS §3); a request that fails before it takes the count on its way out.
   */
  readonly burstInHandler?: boolean;
  /** What the route accepts and answers, as zod schemas: validation and the OpenAPI document. */
  readonly doc?: RouteDoc;
  /** Route limits, key requirements and metering, in order, before the input is validated. */
  readonly guards?: (deps: D) => readonly RequestHandler[];
  /** The handler: it reads its input parsed (`inputOf`). */
  readonly handler: (deps: D) => RequestHandler;
}

/** Declares one route; what can't work fails here, at start-up, rather than on the first request. */
export function declareRoute<D>(route: RouteDeclaration<D>): RouteDeclaration<D> {
  const name = `${route.method.toUpperCase()} ${String(route.path)}`;
  if (typeof route.path !== 'string' && !route.label) throw new Error(`${name}: a RegExp path needs a label for metrics and logs`);
  if (route.visibility !== 'public' && (route.queryToken || route.burstInHandler || route.alsoBehindSession || route.undocumented)) {
    throw new Error(`${name}: queryToken, burstInHandler, alsoBehindSession and undocumented are for public routes`);
  }
  if (route.sessionless && route.visibility !== 'session') throw new Error(`${name}: only a session route can be sessionless`);
  if (route.alsoBehindSession && typeof route.path !== 'string') throw new Error(`${name}: a route behind the session needs a string path`);
  return route;
}

/**
 * The route as its app mounts it. A public route's path and documented path get its `base`; a
 * session route's documented path gets `SESSION_ROOT`, while its Express path stays relative to it,
 * where its router is mounted (`app.ts`).
 */
export function resolveRoute<D>(route: RouteDeclaration<D>): RouteDeclaration<D> {
  const { base = '', ...rest } = route;
  const root = route.visibility === 'session' ? SESSION_ROOT : base;
  const path = typeof rest.path === 'string' ? `${base}${rest.path}` : rest.path;
  return { ...rest, path, doc: rest.doc && { ...rest.doc, path: `${root}${rest.doc.path}` } };
}

/**
 * The session copy of a public route the dashboard also calls: the same declaration, handlers and
 * validation, below `SESSION_ROOT` instead of its public `base`, its operation named `dashboard…`.
 */
export function behindSession<D>(route: RouteDeclaration<D>): RouteDeclaration<D> {
  const { base: _base, alsoBehindSession: _also, queryToken: _token, burstInHandler: _burst, ...rest } = route;
  const doc = rest.doc && { ...rest.doc, operationId: `dashboard${rest.doc.operationId.charAt(0).toUpperCase()}${rest.doc.operationId.slice(1)}` };
  return { ...rest, visibility: 'session', doc };
}
