/**
 * Every route, public, session and internal, in one table (STYLE §1), each declared the same way
 * (`declare.ts`) and mounted by `mount.ts`. The OpenAPI document is made from the public ones.
 *
 * | Path | Visibility | Declared in (under `api/src/`) |
 * | --- | --- | --- |
 * | `GET /api/v1/openapi.json`, `GET /docs` | public | `openapi/routes.ts` |
 * | `POST /api/v1/query`, `GET`/`HEAD /api/v1/query.csv`, `/api/v1/query.parquet` | public | `sql/routes.ts` |
 * | `GET`/`HEAD /api/v1/export/{name}` | public | `exports/routes.ts` |
 * | `GET /api/v1/auth/usage` | public | `usage/routes.ts` |
 * | `POST /mcp` (`GET`, `DELETE`: 405) | public | `mcp/routes.ts` |
 * | `/api/v1/datasets`, `/api/v1/datasets/{id}`, `…/file`, `…/search`, `…/query` | public | `sheets/routes.ts` |
 * | `GET /https:/{wikipediaUrl}`, `GET /{source}/{keywords}` (last: they match any two segments) | public | `lookups/routes.ts` |
 * | `/dashboard/api/*` | session | `session/*\/routes.ts`, listed by `session/routes.ts` |
 * | `/dashboard/api/datasets…`, `POST /dashboard/api/query` | session | the public declarations flagged `alsoBehindSession` |
 * | `/admin/*` (admin port) | internal | `admin/routes.ts` |
 */
import { type AdminDeps, ADMIN_OWN_ROUTES } from '../admin/routes.ts';
import { type ExportDeps, exportRoutes } from '../exports/routes.ts';
import { type LookupDeps, lookupRoutes } from '../lookups/routes.ts';
import { mcpRoutes } from '../mcp/routes.ts';
import type { McpDeps } from '../mcp/tool-context.ts';
import { buildOpenApiDocument } from '../openapi/document.ts';
import { docsRoutes } from '../openapi/routes.ts';
import { type SessionRouteDeps, SESSION_OWN_ROUTES } from '../session/routes.ts';
import { type SheetDeps, datasetRoutes } from '../sheets/routes.ts';
import { type SqlDeps, queryRoutes } from '../sql/routes.ts';
import type { UsageHandlerDeps } from '../usage/handler.ts';
import { usageRoutes } from '../usage/routes.ts';
import { type RouteDeclaration, type Visibility, behindSession, resolveRoute } from './declare.ts';

/** Everything the routes of the table use, each feature naming its own part: the services satisfy it (`app.ts`). */
export type RouteDeps = SqlDeps & ExportDeps & UsageHandlerDeps & McpDeps & SheetDeps & LookupDeps & SessionRouteDeps & AdminDeps;

/** The one table, in mounting order: within a visibility the first matching route answers. */
export const ROUTES: readonly RouteDeclaration<RouteDeps>[] = [
  ...docsRoutes(openApiDocument),
  ...queryRoutes,
  ...exportRoutes,
  ...usageRoutes,
  ...mcpRoutes,
  ...datasetRoutes,
  ...lookupRoutes,
  ...SESSION_OWN_ROUTES,
  ...ADMIN_OWN_ROUTES,
];

/** The routes of one visibility as they are mounted: full paths, and the public routes the dashboard also calls behind its session. */
export function routesOf(visibility: Visibility): RouteDeclaration<RouteDeps>[] {
  const own = ROUTES.filter((route) => route.visibility === visibility);
  const reused = visibility === 'session' ? ROUTES.filter((route) => route.alsoBehindSession).map(behindSession) : [];
  return [...own, ...reused].map(resolveRoute);
}

export const API_ROUTES = routesOf('public');
export const SESSION_ROUTES = routesOf('session');
export const ADMIN_ROUTES = routesOf('internal');

let document: object | undefined;

/** The OpenAPI document of the public routes, built once. */
export function openApiDocument(): object {
  document ??= buildOpenApiDocument(API_ROUTES);
  return document;
}
