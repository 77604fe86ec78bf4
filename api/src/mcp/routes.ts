import type { RequestHandler } from 'express';
import { z } from 'zod';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import { optionalAnonymousLimitHeaders, optionalCreditHeaders } from '../openapi/headers.ts';
import type { RouteDoc } from '../routes/types.ts';
import { type RouteDeclaration, declareRoute } from '../routes/declare.ts';
import type { McpDeps } from './tool-context.ts';
import { MAX_BATCH_CALLS } from './batch.ts';
import { mcpPostHandler } from './handler.ts';

/** SPEC: `GET /mcp` and `DELETE /mcp` answer 405; the server is stateless and POST-only. */
const methodNotAllowed: RequestHandler = function mcpMethodNotAllowed() {
  throw new ApiError(ErrorCode.METHOD_NOT_ALLOWED, {}, { Allow: 'POST' });
};

// Documentation only: the MCP SDK reads and answers the JSON-RPC messages itself, with JSON-RPC errors.
const jsonRpc = z.unknown().meta({
  id: 'JsonRpcMessage',
  description: 'A JSON-RPC 2.0 message, or a batch of them (MCP Streamable HTTP).',
  override: { type: ['object', 'array'] },
});

const postDoc: RouteDoc = {
  path: '/mcp',
  operationId: 'mcp',
  summary: 'MCP endpoint (stateless Streamable HTTP, JSON responses)',
  description:
    'Tools: `search_service {source, query, limit?}` (the lookup and price of `GET /{source}/{keywords}`), `list_sources {}` ' +
    '(free) and `run_sql {sql, datasetIds?}` (needs a key; the billing of `POST /api/v1/query`). Tool failures are ' +
    '`isError: true` results with HTTP 200. Never an authentication error: without a valid key the calls use the ' +
    'anonymous allowance. Every call counts: each message of a JSON-RPC batch (at most ' + String(MAX_BATCH_CALLS) + ' messages; a larger ' +
    'batch is a JSON-RPC error with HTTP 400) is one request to the burst limit, and each `search_service`/`run_sql` call of an ' +
    'anonymous caller one use of the allowance. A call past a limit gets that limit\'s error as its own answer (a tool call an ' +
    '`isError` result) while the calls before it run; when no call can run, the answer is the limit\'s REST 429.',
  tag: 'MCP',
  auth: 'optional',
  body: { contentType: 'application/json', schema: jsonRpc },
  responses: {
    200: {
      description: 'The JSON-RPC answer.',
      content: { 'application/json': jsonRpc },
      headers: { ...optionalCreditHeaders, ...optionalAnonymousLimitHeaders },
    },
    202: { description: 'A notification or response from the client was accepted.' },
  },
  errors: [ErrorCode.REQUEST_LIMIT_EXCEEDED],
};

const refusedDoc = (method: 'get' | 'delete'): RouteDoc => ({
  path: '/mcp',
  operationId: `mcp${method === 'get' ? 'Get' : 'Delete'}`,
  summary: `${method.toUpperCase()} /mcp is not offered (stateless, POST-only)`,
  tag: 'MCP',
  auth: 'none',
  responses: {},
  errors: [ErrorCode.METHOD_NOT_ALLOWED],
});

/**
 * SPEC "POST /mcp": never an authentication error (an invalid key is the anonymous allowance), key by
 * header or `token`, the same 429 bodies as REST. Credit is checked per tool call by the meter.
 */
export const mcpRoutes: readonly RouteDeclaration<McpDeps>[] = [
  declareRoute<McpDeps>({
    method: 'post',
    visibility: 'public',
    path: '/mcp',
    style: 'plain',
    queryToken: true,
    doc: postDoc,
    handler: (s) => mcpPostHandler(s),
  }),
  declareRoute<McpDeps>({ method: 'get', visibility: 'public', path: '/mcp', style: 'plain', doc: refusedDoc('get'), handler: () => methodNotAllowed }),
  declareRoute<McpDeps>({ method: 'delete', visibility: 'public', path: '/mcp', style: 'plain', doc: refusedDoc('delete'), handler: () => methodNotAllowed }),
];
