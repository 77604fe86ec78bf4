import type { RequestHandler } from 'express';
import { ApiError } from '../../errors/api-error.ts';
import { ErrorCode } from '../../errors/codes.ts';
import type { RouteDef } from '../types.ts';

/** SPEC: `GET /mcp` and `DELETE /mcp` answer 405; the server is stateless and POST-only. */
const methodNotAllowed: RequestHandler = function mcpMethodNotAllowed() {
  throw new ApiError(ErrorCode.METHOD_NOT_ALLOWED, {}, { Allow: 'POST' });
};

export function mcpMethodRoutes(): RouteDef[] {
  return [
    { method: 'get', path: '/mcp', style: 'plain', handlers: [methodNotAllowed] },
    { method: 'delete', path: '/mcp', style: 'plain', handlers: [methodNotAllowed] },
  ];
}
