import type { Services } from '../../services.ts';
import type { RouteDef } from '../types.ts';
import { ARTICLE_PATH, KEYWORD_PATH, articleLookupHandler, keywordLookupHandler } from './handler.ts';

/**
 * SPEC "GET /{source}/{keywords}" and "GET /https:/{wikipediaUrl}": anonymous allowance (only 2xx
 * count), up-front 402 at zero balance, `token` accepted. Their paths match raw two-segment paths
 * outside `/api/` and `/mcp/`, so longer unknown paths still answer the plain 404.
 */
export function lookupRoutes(services: Services): RouteDef[] {
  const { guards } = services;
  const chain = [guards.anonymousLimit, guards.requireCredit];
  return [
    { method: 'get', path: ARTICLE_PATH, label: '/https:/{wikipediaUrl}', style: 'lookup', queryToken: true, handlers: [...chain, articleLookupHandler(services)] },
    { method: 'get', path: KEYWORD_PATH, label: '/{source}/{keywords}', style: 'lookup', queryToken: true, handlers: [...chain, keywordLookupHandler(services)] },
  ];
}
