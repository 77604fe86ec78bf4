import type { Services } from '../../services.ts';
import type { RouteDef } from '../types.ts';
import { fileQueryHandler, postQueryHandler } from './handlers.ts';

/**
 * SPEC: the SQL routes. Express answers HEAD with the GET handler; HEAD runs and charges like GET.
 * The 402 comes from the handler, and only for a query that has to run (DECISIONS §3).
 */
export function queryRoutes(services: Services): RouteDef[] {
  const { requireKey } = services.guards;
  const guarded = (handler: RouteDef['handlers'][number]) => [requireKey, handler];
  return [
    { method: 'post', path: '/api/v1/query', style: 'flat', handlers: guarded(postQueryHandler(services)) },
    { method: 'get', path: '/api/v1/query.csv', style: 'flat', queryToken: true, handlers: guarded(fileQueryHandler(services, 'csv')) },
    { method: 'get', path: '/api/v1/query.parquet', style: 'flat', queryToken: true, handlers: guarded(fileQueryHandler(services, 'parquet')) },
  ];
}
