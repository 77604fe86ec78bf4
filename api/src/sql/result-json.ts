/**
 * The JSON answer of a SQL result (DECISIONS §6): `row_count`, `rows`, `columns`, `truncated`,
 * `sql_executed`, with the rows copied in as the runner's JSON text, never parsed here. The API
 * prices the result from its meta; it has no reason to look inside the rows.
 */
import { jsonWithRawField } from '@uda/shared/raw-json';
import type { SqlResult } from './run-sql.ts';

const NO_ROWS = Buffer.from('[]');

/** `leading` fields come first (the route's `status`). */
export function sqlResultJson(result: Pick<SqlResult, 'meta' | 'rowsJson'>, leading: object = {}): Buffer {
  const { meta } = result;
  return jsonWithRawField({ ...leading, row_count: meta.rowCount }, 'rows', result.rowsJson ?? NO_ROWS, {
    columns: meta.columns,
    truncated: meta.truncated,
    sql_executed: meta.sqlExecuted,
  });
}
