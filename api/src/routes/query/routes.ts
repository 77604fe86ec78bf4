import type { Services } from '../../services.ts';
import type { RouteDef } from '../types.ts';
import { fileQueryHandler, postQueryHandler } from './handlers.ts';

/** SPEC: the SQL routes. Express answers HEAD with the GET handler; HEAD runs and charges like GET. */
export function queryRoutes(services: Services): RouteDef[] {
  const { requireKey, requireCredit } = services.guards;
  const guarded = (handler: RouteDef['handlers'][number]) => [requireKey, requireCredit, handler];
  return [
    { method: 'post', path: '/api/v1/query', style: 'flat', handlers: guarded(postQueryHandler(services)) },
    { method: 'get', path: '/api/v1/query.csv', style: 'flat', queryToken: true, handlers: guarded(fileQueryHandler(services, 'csv')) },
    { method: 'get', path: '/api/v1/query.parquet', style: 'flat', queryToken: true, handlers: guarded(fileQueryHandler(services, 'parquet')) },
  ];
}
