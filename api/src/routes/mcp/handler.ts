/**
 * POST /mcp: stateless Streamable HTTP (DECISIONS §9), a fresh server and transport per request.
 * JSON responses (not SSE) so the metering headers set by a tool can still go out with the answer.
 */
import type { RequestHandler } from 'express';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Services } from '../../services.ts';
import { buildMcpServer } from './tools.ts';

export function mcpPostHandler(services: Services): RequestHandler {
  return async function mcpPost(req, res) {
    const server = buildMcpServer({ services, req, res });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.once('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  };
}
