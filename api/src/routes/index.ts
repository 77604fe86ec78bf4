/**
 * Every public route, in one list (STYLE §1), and the one place they are mounted. Each route runs
 * behind its error style and authentication; its own handlers add route limits and metering.
 */
import type { Express, RequestHandler } from 'express';
import { authenticate } from '../middleware/authenticate/index.ts';
import { setRouteLabel, setStyle } from '../request-context.ts';
import type { Services } from '../services.ts';
import { datasetRoutes } from './datasets/routes.ts';
import { lookupRoutes } from './lookups/routes.ts';
import { mcpRoutes } from './mcp/routes.ts';
import { exportRoutes } from './exports/routes.ts';
import { queryRoutes } from './query/routes.ts';
import type { RouteDef } from './types.ts';
import { usageRoutes } from './usage/routes.ts';

export function apiRoutes(services: Services): RouteDef[] {
  return [...queryRoutes(services), ...exportRoutes(services), ...usageRoutes(services), ...mcpRoutes(services), ...datasetRoutes(services), ...lookupRoutes(services)];
}

export function registerRoutes(app: Express, routes: readonly RouteDef[], services: Services): void {
  const withToken = authenticate({ keys: services.keys, queryToken: true, logger: services.logger });
  const headerOnly = authenticate({ keys: services.keys, queryToken: false, logger: services.logger });
  for (const route of routes) {
    const label = route.label ?? String(route.path);
    const tag: RequestHandler = function tagRouteStyle(req, _res, next) {
      setStyle(req, route.style);
      setRouteLabel(req, label);
      next();
    };
    app[route.method](route.path, tag, route.queryToken ? withToken : headerOnly, ...route.handlers);
  }
}
