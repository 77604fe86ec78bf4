import type { Services } from '../../services.ts';
import type { RouteDef } from '../types.ts';
import { exportHandler } from './handler.ts';

/**
 * SPEC export routes: the three bulk files and `/{source}`, one handler; HEAD via Express's GET.
 * No up-front credit check: only a download that creates a new charge needs credit (DECISIONS §3).
 */
export function exportRoutes(services: Services): RouteDef[] {
  const { requireKey } = services.guards;
  return [{ method: 'get', path: '/api/v1/export/:name', style: 'flat', queryToken: true, handlers: [requireKey, exportHandler(services)] }];
}
