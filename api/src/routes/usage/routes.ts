import type { Services } from '../../services.ts';
import type { RouteDef } from '../types.ts';
import { usageHandler } from './handler.ts';

export function usageRoutes(services: Services): RouteDef[] {
  return [{ method: 'get', path: '/api/v1/auth/usage', style: 'flat', handlers: [usageHandler(services)] }];
}
