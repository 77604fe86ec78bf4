/** What every MCP tool call gets: the request it came in on (its own module: tools.ts and sql-tool.ts both need it). */
import type { Request, Response } from 'express';
import type { Services } from '../services.ts';

export interface ToolContext {
  services: Services;
  req: Request;
  res: Response;
}
