/**
 * Connected sheets (issue 8, DECISIONS §8). Every route needs a key (header or `token`), answers
 * keyless callers with the connected-sheet 401, counts toward the 1,000-per-day sheet cap and is
 * never charged (DECISIONS §3).
 */
import type { RequestHandler } from 'express';
import type { Services } from '../../services.ts';
import type { RouteDef } from '../types.ts';
import { createHandler, deleteHandler, listHandler, queryHandler, replaceHandler, searchHandler, showHandler } from './handlers.ts';

export function datasetRoutes(services: Services): RouteDef[] {
  const { requireSheetKey, sheetCap } = services.guards;
  const route = (method: RouteDef['method'], path: string, handler: RequestHandler): RouteDef => ({
    method,
    path,
    style: 'flat',
    queryToken: true,
    handlers: [requireSheetKey, sheetCap, handler],
  });
  return [
    route('post', '/api/v1/datasets', createHandler(services)),
    route('get', '/api/v1/datasets', listHandler(services)),
    route('get', '/api/v1/datasets/:id', showHandler(services)),
    route('put', '/api/v1/datasets/:id/file', replaceHandler(services)),
    route('delete', '/api/v1/datasets/:id', deleteHandler(services)),
    route('get', '/api/v1/datasets/:id/search', searchHandler(services)),
    route('post', '/api/v1/datasets/:id/query', queryHandler(services)),
  ];
}
