/**
 * The public Express app, built from services (so tests can start it on port 0). Order per
 * DECISIONS §1 and SPEC Limits: request id → access log → helmet → CORS → burst limit → per route:
 * authentication → route limits → metering → handler → unknown path → error handler. The burst
 * count is taken in the same Redis call as the route limits (`routes/index.ts`).
 * The dashboard (DECISIONS §10) sits before CORS and the burst limit: it is same-origin only, its
 * static files should not spend a caller's burst allowance, and its sign-in has its own limits.
 */
import express, { type Express } from 'express';
import helmet from 'helmet';
import { errorHandler, notFound } from './errors/handler.ts';
import { accessLog } from './middleware/access-log/index.ts';
import { deferBurstLimit } from './middleware/burst-limit/index.ts';
import { guardHandler } from './middleware/counters/index.ts';
import { cors } from './middleware/cors/index.ts';
import { requestId } from './middleware/request-id/index.ts';
import { apiRoutes, registerRoutes } from './routes/index.ts';
import type { RouteDef } from './routes/types.ts';
import type { Services } from './services.ts';
import { sessionRouter } from './session/routes.ts';
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
  app.use(requestId());
  app.use(accessLog({ logger, metrics }));
  // A data API, not pages: the strictest CSP (OWASP REST guidance), and resources readable by
  // browsers of other origins (CORS below decides who).
  app.use(
    helmet({
      contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
      crossOriginResourcePolicy: { policy: 'cross-origin' },
    }),
  );
  app.use('/dashboard', dashboardHeaders());
  app.use('/dashboard/api', express.json({ limit: '1mb' }), sessionRouter(services));
  app.use('/dashboard', dashboardStatic());
  // Nothing else lives under /dashboard: without this, `/dashboard/x` would reach the lookup routes.
  app.use('/dashboard', notFound());
  app.use(cors({ origins: config.CORS_ORIGINS.split(',').map((o) => o.trim()) }));
  // Taken by each route together with its own limits (`registerRoutes`), or below for an unknown path.
  app.use(deferBurstLimit());
  // Extra (test, bench) routes first: the lookup routes match any two-segment path and must come last.
  registerRoutes(app, [...(options.extraRoutes?.(services) ?? []), ...apiRoutes(services)], services);
  app.use(guardHandler(limiterBackend, guards.burst));
  app.use(notFound());
  app.use(errorHandler({ logger }));
  return app;
}
