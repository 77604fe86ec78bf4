import type { RequestHandler } from 'express';
import { ApiError } from '../../errors/api-error.ts';
import { ErrorCode } from '../../errors/codes.ts';
import type { Services } from '../../services.ts';
import type { RouteDef } from '../types.ts';
import { mcpAllowance } from './allowance.ts';
import { mcpPostHandler } from './handler.ts';

/** SPEC: `GET /mcp` and `DELETE /mcp` answer 405; the server is stateless and POST-only. */
const methodNotAllowed: RequestHandler = function mcpMethodNotAllowed() {
  throw new ApiError(ErrorCode.METHOD_NOT_ALLOWED, {}, { Allow: 'POST' });
};

/**
 * SPEC "POST /mcp": never an authentication error (an invalid key is the anonymous allowance), key by
 * header or `token`, the same 429 bodies as REST. Credit is checked per tool call by the meter.
 */
export function mcpRoutes(services: Services): RouteDef[] {
  const allowance = mcpAllowance({ counter: services.counters.anonymous, points: services.limits.anonymous.points });
  return [
    { method: 'post', path: '/mcp', style: 'plain', queryToken: true, handlers: [allowance, mcpPostHandler(services)] },
    { method: 'get', path: '/mcp', style: 'plain', handlers: [methodNotAllowed] },
    { method: 'delete', path: '/mcp', style: 'plain', handlers: [methodNotAllowed] },
  ];
}
