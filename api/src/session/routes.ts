/**
 * The dashboard's own session routes under /dashboard/api (DECISIONS §10), by resource. Each is
 * declared like every other route (`routes/declare.ts`), `visibility: 'session'`: authenticated by
 * the session cookie only (an Authorization header is ignored here, as the cookie is on /api/v1),
 * CSRF-checked on every state-changing request, and left out of the OpenAPI document. The sheets
 * and SQL routes the dashboard also calls are the public declarations, flagged `alsoBehindSession`
 * (`routes/table.ts`), so their rules, caps and billing are the same by construction.
 */
import type { RouteDeclaration } from '../routes/declare.ts';
import { type AuthRouteDeps, authRoutes } from './auth/routes.ts';
import { type KeyRouteDeps, keyRoutes } from './keys/routes.ts';
import { type PaymentRouteDeps, paymentRoutes } from './payments/routes.ts';
import { tableRoutes } from './tables/routes.ts';
import { type UsageRouteDeps, sessionUsageRoutes } from './usage/routes.ts';

export type SessionRouteDeps = AuthRouteDeps & KeyRouteDeps & UsageRouteDeps & PaymentRouteDeps;

/** In the order the dashboard's session API has always listed them. */
export const SESSION_OWN_ROUTES: readonly RouteDeclaration<SessionRouteDeps>[] = [...authRoutes, ...keyRoutes, ...sessionUsageRoutes, ...paymentRoutes, ...tableRoutes];
