/**
 * Where the route table (`table.ts`) is mounted, for every visibility: the public routes behind
 * their authentication and limits, the session routes behind the session cookie and CSRF, the
 * internal (admin) routes as they are, on the admin app behind its bearer token (`admin/app.ts`).
 * Each route is built the same way first (`buildRoute`): its guards, its input validation, its
 * handler.
 */
import express, { type ErrorRequestHandler, type Express, type Request, type RequestHandler, type Response, type Router } from 'express';
import type { AccountStore } from '../accounts/store.ts';
import type { KeyStore } from '../keys/store.ts';
import type { LimiterBackend } from '../limiter/types.ts';
import { authenticate } from '../middleware/authenticate/index.ts';
import { type CounterGuard, applyGuards, liftGuards } from '../middleware/counters/index.ts';
import { setRouteLabel, setStyle } from '../request-context.ts';
import { requireCsrf, requireSession } from '../session/middleware.ts';
import type { SessionStore } from '../session/store.ts';
import type { RouteDeclaration } from './declare.ts';
import { byFirstSegment } from './dispatch.ts';
import type { RouteDef } from './types.ts';
import { readJsonBody, validateInput } from './validate.ts';

/**
 * One declaration's handlers built from `deps`: its guards (limits, key requirements, metering),
 * its input validation (after them, so a refused request's input is never read), then its handler,
 * which takes the parsed input from there (`inputOf`). Every table is built through here.
 */
export function buildRoute<D>(route: RouteDeclaration<D>, deps: D): RouteDef {
  const { guards, handler, visibility: _visibility, undocumented: _undocumented, alsoBehindSession: _also, sessionless: _sessionless, base: _base, ...rest } = route;
  const validate = route.doc ? validateInput(route.path, route.doc) : undefined;
  return { ...rest, handlers: [...(guards?.(deps) ?? []), ...(validate ? [validate] : []), handler(deps)] };
}

/** What mounting the public routes needs: the key store, the limiter and the burst limit. */
export interface PublicMountDeps {
  readonly keys: KeyStore;
  readonly limiterBackend: LimiterBackend;
  readonly guards: { readonly burst: CounterGuard };
}

/**
 * Mounts each public route as: tag → authentication → its limits → body parser → its other
 * handlers. The limits (the burst limit still pending from `app.ts`, and the route's anonymous
 * allowance or daily cap, wherever its guards list them) are decided in one counter call
 * (`counters/`). A key the cache can't answer takes the burst count alone first, so a flood of
 * unknown keys meets the burst limit before PostgreSQL. A `burstInHandler` route (SQL) leaves the
 * burst count to its handler, which takes it with the re-read marker once the body gave the query
 * id (DECISIONS §3); a request failing before that takes it on its way out. The routes are found by
 * their first path segment (`byFirstSegment`), in the list's order.
 */
export function mountPublicRoutes(app: Express, routes: readonly RouteDef[], deps: PublicMountDeps): void {
  const { keys, limiterBackend, guards } = deps;
  const takeBurst = (req: Request, res: Response) => applyGuards(limiterBackend, [guards.burst], req, res);
  const withToken = authenticate({ keys, queryToken: true, beforeLookup: takeBurst });
  const headerOnly = authenticate({ keys, queryToken: false, beforeLookup: takeBurst });
  const json = express.json({ limit: '1mb' });
  const mount = (router: Router, route: RouteDef) => {
    const label = route.label ?? String(route.path);
    const { guards: routeGuards, rest } = liftGuards(route.handlers);
    const limits = route.burstInHandler ? routeGuards : [guards.burst, ...routeGuards];
    const authenticateCaller = route.queryToken ? withToken : headerOnly;
    const body = route.method === 'get' || route.method === 'head' ? [] : [readJsonBody(route.doc, json)];
    // Tag, authentication and limits as one handler: they run on every request of the route, and
    // each handler of a route is another dispatch through the router.
    const enter: RequestHandler = async function enterRoute(req, res, next) {
      setStyle(req, route.style);
      setRouteLabel(req, label);
      const authenticating = authenticateCaller(req, res);
      if (authenticating) await authenticating;
      await applyGuards(limiterBackend, limits, req, res);
      next();
    };
    router[route.method](route.path, enter, ...body, ...rest, ...(route.burstInHandler ? [takeBurstOnError] : []));
  };
  // A request of a `burstInHandler` route that failed before its handler took the burst count: it
  // counts all the same, and the burst limit's refusal comes first.
  const takeBurstOnError: ErrorRequestHandler = function takePendingBurst(error, req, res, next) {
    applyGuards(limiterBackend, [guards.burst], req, res).then(() => next(error), next);
  };
  app.use(byFirstSegment(routes, mount));
}

/** What the session routes' own guard needs: the session and the account behind it. */
export interface SessionMountDeps {
  readonly sessions: SessionStore;
  readonly accounts: AccountStore;
}

/**
 * The session routes on one router, mounted at `SESSION_ROOT` by `app.ts`, each behind the flat
 * error style and, unless `sessionless`, the session (its account becomes the caller) and its CSRF
 * token on every change.
 */
export function sessionRouter<D extends SessionMountDeps>(routes: readonly RouteDeclaration<D>[], deps: D): Router {
  const router = express.Router();
  router.use(function flatStyle(req, _res, next) {
    setStyle(req, 'flat');
    next();
  });
  const signedIn = [requireSession({ store: deps.sessions, accounts: deps.accounts }), requireCsrf()];
  for (const route of routes) router[route.method](route.path, ...(route.sessionless ? [] : signedIn), ...buildRoute(route, deps).handlers);
  return router;
}

/** The internal routes on the admin app, after its bearer-token check (`admin/app.ts`). */
export function mountInternalRoutes<D>(app: Express, routes: readonly RouteDeclaration<D>[], deps: D): void {
  for (const route of routes) app[route.method](String(route.path), ...buildRoute(route, deps).handlers);
}
