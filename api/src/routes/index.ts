/**
 * Every public route, in one list (STYLE §1), and the one place they are mounted. Each route runs
 * behind its error style and authentication; its own handlers add route limits and metering, and
 * its declaration's schemas validate the input (`validate.ts`) and make the OpenAPI document.
 *
 * | Path | Declared in (under `api/src/`) |
 * | --- | --- |
 * | `GET /api/v1/openapi.json`, `GET /docs` | `openapi/routes.ts` |
 * | `POST /api/v1/query`, `GET`/`HEAD /api/v1/query.csv`, `/api/v1/query.parquet` | `sql/routes.ts` |
 * | `GET`/`HEAD /api/v1/export/{name}` | `exports/routes.ts` |
 * | `GET /api/v1/auth/usage` | `usage/routes.ts` |
 * | `POST /mcp` (`GET`, `DELETE`: 405) | `mcp/routes.ts` |
 * | `/api/v1/datasets`, `/api/v1/datasets/{id}`, `…/file`, `…/search`, `…/query` | `sheets/routes.ts` |
 * | `GET /https:/{wikipediaUrl}`, `GET /{source}/{keywords}` (last: they match any two segments) | `lookups/routes.ts` |
 *
 * The internal routes are declared the same way, flagged `internal` (not in the OpenAPI document),
 * in their own tables behind their own middleware: `/dashboard/api/*` in `session/routes.ts`
 * (session cookie and CSRF), the admin port's `/admin/*` in `admin/routes.ts` (bearer token).
 */
import express, { type ErrorRequestHandler, type Express, type Request, type RequestHandler, type Response, type Router } from 'express';
import { authenticate } from '../middleware/authenticate/index.ts';
import { applyGuards, liftGuards } from '../middleware/counters/index.ts';
import { buildOpenApiDocument } from '../openapi/document.ts';
import { setRouteLabel, setStyle } from '../request-context.ts';
import type { Services } from '../services.ts';
import { byFirstSegment } from './dispatch.ts';
import { datasetRoutes } from '../sheets/routes.ts';
import { docsRoutes } from '../openapi/routes.ts';
import { exportRoutes } from '../exports/routes.ts';
import { lookupRoutes } from '../lookups/routes.ts';
import { mcpRoutes } from '../mcp/routes.ts';
import { queryRoutes } from '../sql/routes.ts';
import type { RouteDeclaration, RouteDef } from './types.ts';
import { usageRoutes } from '../usage/routes.ts';
import { buildRoute, readJsonBody } from './validate.ts';

export const API_ROUTES: readonly RouteDeclaration[] = [
  ...docsRoutes(openApiDocument),
  ...queryRoutes,
  ...exportRoutes,
  ...usageRoutes,
  ...mcpRoutes,
  ...datasetRoutes,
  ...lookupRoutes,
];

let document: object | undefined;

/** The OpenAPI document of `API_ROUTES`, built once. */
export function openApiDocument(): object {
  document ??= buildOpenApiDocument(API_ROUTES);
  return document;
}

/** The declarations with their handlers built from `services`. */
export function apiRoutes(services: Services): RouteDef[] {
  return API_ROUTES.map((route) => buildRoute(route, services));
}



/**
 * Mounts each route as: tag → authentication → its limits → body parser → its other handlers. The
 * limits (the burst limit still pending from `app.ts`, and the route's anonymous allowance or
 * daily cap, wherever its handlers list them) are decided in one counter call (`counters/`). A
 * key the cache can't answer takes the burst count alone first, so a flood of unknown keys meets
 * the burst limit before PostgreSQL. A `burstInHandler` route (SQL) leaves the burst count to its
 * handler, which takes it with the re-read marker once the body gave the query id (DECISIONS §3);
 * a request failing before that takes it on its way out. The routes are found by their first path
 * segment (`byFirstSegment`), in the list's order.
 */
export function registerRoutes(app: Express, routes: readonly RouteDef[], services: Services): void {
  const { keys, limiterBackend, guards } = services;
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
