/**
 * The public Express app, built from services (so tests can start it on port 0). Order per
 * DECISIONS §1 and SPEC Limits: request id → access log → security headers → CORS → burst limit →
 * per route: authentication → route limits → metering → handler → unknown path → error handler.
 * The burst count is taken in the same Redis call as the route limits (`routes/mount.ts`).
 * The dashboard (DECISIONS §10) sits before CORS and the burst limit: it is same-origin only, its
 * static files should not spend a caller's burst allowance, and its sign-in has its own limits.
 */
import express, { type Express, type Router } from 'express';
import { errorHandler, notFound } from './errors/handler.ts';
import { accessLog } from './middleware/access-log/index.ts';
import { deferBurstLimit } from './middleware/burst-limit/index.ts';
import { guardHandler } from './middleware/counters/index.ts';
import { cors } from './middleware/cors/index.ts';
import { oneLayer } from './middleware/one-layer.ts';
import { requestId } from './middleware/request-id/index.ts';
import { securityHeaders } from './middleware/security-headers/index.ts';
import { SESSION_ROOT } from './routes/declare.ts';
import { buildRoute, mountPublicRoutes, sessionRouter } from './routes/mount.ts';
import { API_ROUTES, SESSION_ROUTES } from './routes/table.ts';
import type { RouteDef } from './routes/types.ts';
import type { Services } from './services.ts';
import { dashboardHeaders, dashboardStatic } from './session/static.ts';

export interface AppOptions {
  /** Extra routes mounted with the same chain (tests, benchmarks). */
  extraRoutes?: (services: Services) => RouteDef[];
}

export function buildApp(services: Services, options: AppOptions = {}): Express {
  const { config, logger, metrics, limiterBackend, guards } = services;
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  // DECISIONS §4: trust exactly the configured proxy hops, never an arbitrary X-Forwarded-For.
  app.set('trust proxy', config.TRUST_PROXY_HOPS);
  // The steps every request takes run as one layer each (`oneLayer`): request id → access log →
  // security headers, then (after the dashboard) CORS → the burst mark.
  app.use(oneLayer(requestId(), accessLog({ logger, metrics }), securityHeaders()));
  app.use('/dashboard', dashboardRouter(services));
  // Taken by each route together with its own limits (`mountPublicRoutes`), or below for an unknown path.
  app.use(oneLayer(cors({ origins: config.CORS_ORIGINS.split(',').map((o) => o.trim()) }), deferBurstLimit()));
  // Extra (test, bench) routes first: the lookup routes match any two-segment path and must come last.
  const routes = API_ROUTES.map((route) => buildRoute(route, services));
  mountPublicRoutes(app, [...(options.extraRoutes?.(services) ?? []), ...routes], services);
  app.use(guardHandler(limiterBackend, guards.burst));
  app.use(notFound());
  app.use(errorHandler({ logger, metrics }));
  return app;
}

/** Everything under /dashboard, behind one path match: its own headers, its API, its files, and a 404. */
function dashboardRouter(services: Services): Router {
  const router = express.Router();
  router.use(dashboardHeaders());
  router.use(SESSION_ROOT.slice('/dashboard'.length), express.json({ limit: '1mb' }), sessionRouter(SESSION_ROUTES, services));
  router.use(dashboardStatic());
  // Nothing else lives under /dashboard: without this, `/dashboard/x` would reach the lookup routes.
  router.use(notFound());
  return router;
}
