/**
 * The MCP tools (DECISIONS §9), registered on a fresh server per request. They translate in and out
 * of the same lookup core the REST routes use; billing and the allowance work the same way.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { SOURCES, sourceNames } from '@uda/shared/catalog';
import { DEFAULT_LIMIT, MAX_KEYWORDS_CHARS, MAX_LIMIT, checkKeywords } from '../lookups/input.ts';
import { lookup } from '../lookups/lookup.ts';
import { settleLookup } from '../lookups/settle.ts';
import { callerOf } from '../request-context.ts';
import { markToolSuccess } from './allowance.ts';
import { RUN_SQL_DESCRIPTION, runSqlTool } from './sql-tool.ts';
import type { ToolContext } from './tool-context.ts';
import { toolFailure, toolText } from './tool-errors.ts';

export type { ToolContext } from './tool-context.ts';

const SEARCH_DESCRIPTION =
  'Keyword search in one data source; the same search and price as GET /{source}/{keywords}. ' +
  `Sources (ids and aliases): ${sourceNames().join(', ')}. Call list_sources for what each holds. ` +
  'Billed per result row for callers with an API key; anonymous callers use the daily anonymous allowance.';

export function buildMcpServer(ctx: ToolContext): McpServer {
  const server = new McpServer({ name: 'unified-data-api', version: '1.0.0' });
  server.registerTool(
    'search_service',
    {
      description: SEARCH_DESCRIPTION,
      inputSchema: {
        source: z.string().min(1).max(64).describe('Source id or alias, e.g. "wiki", "arxiv", "books", "sec"'),
        query: z.string().max(MAX_KEYWORDS_CHARS * 4).describe(`Keywords, at most ${MAX_KEYWORDS_CHARS} characters`),
        limit: z.number().int().min(1).max(MAX_LIMIT).optional().describe(`Results to return, 1–${MAX_LIMIT} (default ${DEFAULT_LIMIT})`),
      },
    },
    ({ source, query, limit }) => counted(ctx, 'search_service', () => searchService(ctx, source, query, limit ?? DEFAULT_LIMIT)),
  );
  server.registerTool(
    'list_sources',
    { description: 'Lists every data source with its aliases, kind (live or stored), price class and SQL tables. Free.' },
    () => counted(ctx, 'list_sources', () => toolText(JSON.stringify({ sources: SOURCES.map(describeSource) }))),
  );
  server.registerTool(
    'run_sql',
    {
      description: RUN_SQL_DESCRIPTION,
      inputSchema: {
        sql: z.string().describe('One SELECT statement, at most 10,000 characters'),
        datasetIds: z.array(z.string()).max(20).optional().describe('Ids or slugs of your connected sheets to expose as tables'),
      },
    },
    ({ sql, datasetIds }) => counted(ctx, 'run_sql', () => runSqlTool(ctx, sql, datasetIds ?? [])),
  );
  return server;
}

/** `uda_mcp_tool_calls_total{tool,outcome}`: every call, `ok`, or `error` when its result is an error. */
async function counted(ctx: ToolContext, tool: string, call: () => CallToolResult | Promise<CallToolResult>): Promise<CallToolResult> {
  let outcome = 'error';
  try {
    const result = await call();
    if (!result.isError) outcome = 'ok';
    return result;
  } finally {
    ctx.services.metrics.mcpToolCalls.inc({ tool, outcome });
  }
}

async function searchService(ctx: ToolContext, source: string, query: string, limit: number) {
  try {
    const outcome = await lookup(ctx.services, callerOf(ctx.req), { source, keywords: checkKeywords(query), limit });
    // Each tool call is its own charge under a server-minted key: a JSON-RPC batch may hold several.
    const envelope = await settleLookup(ctx.services.billing, ctx.req, ctx.res, outcome);
    markToolSuccess(ctx.req);
    return toolText(JSON.stringify(envelope.data));
  } catch (error) {
    ctx.services.metrics.failedWith(error);
    return toolFailure(error, source);
  }
}

function describeSource(source: (typeof SOURCES)[number]) {
  return {
    id: source.id,
    aliases: source.aliases,
    kind: source.kind,
    price_class: source.priceClass,
    title: source.title,
    tables: source.tables.map((t) => t.name),
  };
}
