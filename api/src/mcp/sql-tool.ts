/**
 * The MCP `run_sql` tool (DECISIONS §9): needs a key, and runs the `runSql` core and
 * `deliverSql` exactly as `POST /api/v1/query` does (validator, daily cap, 5-minute window, billing).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { deliverCharged } from '../billing/index.ts';
import { MESSAGES } from '../errors/codes.ts';
import { callerOf } from '../request-context.ts';
import { sqlResultJson } from '../sql/result-json.ts';
import { runSql } from '../sql/run-sql.ts';
import { deliverSql, sqlCallerOf, sqlHooks } from '../sql/settle.ts';
import { markToolSuccess } from './allowance.ts';
import { sqlToolFailure, toolText } from './tool-errors.ts';
import type { ToolContext } from './tool-context.ts';

export const RUN_SQL_DESCRIPTION =
  'Runs one read-only SELECT (DuckDB dialect) over the public datasets and returns up to 1,000 rows as JSON. ' +
  'Needs an API key. Billed per row returned, like POST /api/v1/query; a repeat within 5 minutes is free. Call list_sources for table names.';

export const NEEDS_KEY = 'run_sql needs an API key: send it as "Authorization: Bearer <API_KEY>" or as ?token= on the /mcp URL.';

export async function runSqlTool({ services, req, res }: ToolContext, sql: string, datasetIds: readonly string[]): Promise<CallToolResult> {
  const caller = callerOf(req);
  if (caller.kind !== 'account') return toolText(NEEDS_KEY, true);
  if (!caller.emailVerified) return toolText(MESSAGES.EMAIL_NOT_VERIFIED, true);
  try {
    const result = await runSql(services, sqlCallerOf(req), { sql, datasetIds, format: 'json' }, sqlHooks(services, req, res));
    // The tool result goes out in this HTTP response: it is delivered when the response is.
    deliverCharged(res, await deliverSql(services, req, res, result));
    markToolSuccess(req);
    return toolText(sqlResultJson(result).toString('utf8'));
  } catch (error) {
    services.metrics.failedWith(error);
    return sqlToolFailure(error);
  }
}
