import express, { type RequestHandler, type Router } from 'express';

/** What `byFirstSegment` needs of a route: its path. */
interface Routed {
  readonly path: string | RegExp;
}

/** The characters of a path segment that match only themselves (case aside) in an Express path. */
const LITERAL_SEGMENT = /^[A-Za-z0-9._~-]+$/;

/**
 * The lower-cased first segment of a route's path when it is literal text, else undefined: a
 * parameter (`/:source/…`), a wildcard or a RegExp can match any first segment.
 */
export function literalFirstSegment(path: string | RegExp): string | undefined {
  if (typeof path !== 'string') return undefined;
  const segment = path.split('/')[1] ?? '';
  return LITERAL_SEGMENT.test(segment) ? segment.toLowerCase() : undefined;
}

/**
 * One handler that runs `routes` exactly as one router with all of them in order would, but walks
 * only the routes that can match the request's first segment. Express tries each route of a router
 * in turn, a regular expression each; with the lookups last (they match any two segments), a lookup
 * walked every route before it. Here each literal first segment (`api`, `mcp`, `docs`) gets a router
 * holding, in the list's order, its own routes and the ones that can match any segment; any other
 * segment gets a router of those only. A route with a literal first segment matches only a request
 * whose first segment is that text, ASCII case aside (Express routes are case-insensitive, and a
 * non-ASCII character never matches an ASCII one), so every request meets the same routes in the
 * same order as before. `mount` adds one route to a router.
 */
export function byFirstSegment<R extends Routed>(routes: readonly R[], mount: (router: Router, route: R) => void): RequestHandler & { readonly routers: readonly Router[] } {
  const segments = new Set(routes.map((route) => literalFirstSegment(route.path)).filter((s) => s !== undefined));
  const routerOf = (segment: string | undefined): Router => {
    const router = express.Router();
    for (const route of routes) {
      const own = literalFirstSegment(route.path);
      if (own === undefined || own === segment) mount(router, route);
    }
    return router;
  };
  const bySegment = new Map([...segments].map((segment) => [segment, routerOf(segment)]));
  const anySegment = routerOf(undefined);
  const dispatch: RequestHandler = function dispatchByFirstSegment(req, res, next) {
    const path = req.path;
    const end = path.indexOf('/', 1);
    const segment = end === -1 ? path.slice(1) : path.slice(1, end);
    const router = bySegment.get(segment) ?? bySegment.get(segment.replace(/[A-Z]/g, (c) => c.toLowerCase())) ?? anySegment;
    router(req, res, next);
  };
  // The routers, for what lists the mounted routes (the OpenAPI document's test).
  return Object.assign(dispatch, { routers: [...bySegment.values(), anySegment] });
}
