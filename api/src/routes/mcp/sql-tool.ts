/**
 * The MCP `run_sql` tool (DECISIONS §9): needs a key, and runs the `runSql` core and
 * `settleSql` exactly as `POST /api/v1/query` does (validator, daily cap, 5-minute window, billing).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { consumeDailyCap } from '../../middleware/daily-cap/index.ts';
import { callerOf } from '../../request-context.ts';
import { runSql } from '../../sql/run-sql.ts';
import { settleSql } from '../query/settle.ts';
import { markToolSuccess } from './allowance.ts';
import { sqlToolFailure, toolText } from './tool-errors.ts';
import type { ToolContext } from './tools.ts';

export const RUN_SQL_DESCRIPTION =
  'Runs one read-only SELECT (DuckDB dialect) over the public datasets and returns up to 1,000 rows as JSON. ' +
  'Needs an API key. Billed per row returned, like POST /api/v1/query; a repeat within 5 minutes is free. Call list_sources for table names.';

export const NEEDS_KEY = 'run_sql needs an API key: send it as "Authorization: Bearer <API_KEY>" or as ?token= on the /mcp URL.';

export async function runSqlTool({ services, req, res }: ToolContext, sql: string, datasetIds: readonly string[]): Promise<CallToolResult> {
  const caller = callerOf(req);
  if (caller.kind !== 'account') return toolText(NEEDS_KEY, true);
  try {
    const beforeExecute = () => consumeDailyCap(services.guards.exportCapOptions, req, res);
    const result = await runSql(services, { accountId: caller.accountId, tier: caller.tier }, { sql, datasetIds, format: 'json' }, { beforeExecute });
    await settleSql(services, req, res, result);
    markToolSuccess(req);
    const { meta } = result;
    return toolText(JSON.stringify({ row_count: meta.rowCount, rows: result.rows ?? [], columns: meta.columns, truncated: meta.truncated, sql_executed: meta.sqlExecuted }));
  } catch (error) {
    return sqlToolFailure(error);
  }
}
