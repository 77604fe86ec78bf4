/** What every MCP tool call gets: the request it came in on (its own module: tools.ts and sql-tool.ts both need it). */
import type { Request, Response } from 'express';
import type { Limits } from '../limits.ts';
import type { LookupHandlerDeps } from '../lookups/handler.ts';
import type { Metrics } from '../metrics.ts';
import type { Counters, Guards } from '../middleware/guards.ts';
import type { SqlHandlerDeps } from '../sql/handlers.ts';

/** What the MCP endpoint uses: the lookups and SQL its tools run, and the limits each call counts toward. */
export type McpDeps = LookupHandlerDeps &
  SqlHandlerDeps & {
    readonly counters: Pick<Counters, 'anonymous'>;
    readonly limits: Limits;
    readonly metrics: Pick<Metrics, 'mcpToolCalls' | 'failedWith'>;
    readonly guards: Pick<Guards, 'burst'>;
  };

export interface ToolContext {
  services: McpDeps;
  req: Request;
  res: Response;
}
