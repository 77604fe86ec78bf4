/**
 * The SQL validator shared by the API (to fail fast) and the runner (always, before it runs
 * anything). It sits on top of the runner's DuckDB sandbox, never instead of it (DECISIONS §6).
 */
import { checkSqlText, ONLY_SELECT_MESSAGE } from './text-rules.ts';
import type { SqlParser } from './parser.ts';

export type Validation =
  | { ok: true; tables: string[] }
  | { ok: false; message: string; reason: 'text' | 'syntax' | 'statement' | 'function' };

// Functions that reach outside the query's tables: files, other SQL text, or engine metadata that
// holds paths and settings. The sandbox stops the file readers too; this list also stops the ones
// the sandbox allows (`query()`, `duckdb_settings()` leaking paths). Names ending in `_` are prefixes.
const DENIED_FUNCTIONS = [
  'read_', 'parquet_', 'duckdb_', 'pragma_', 'sqlite_', 'postgres_', 'mysql_', 'iceberg_', 'delta_',
  'glob', 'sniff_csv', 'query', 'query_table', 'current_setting', 'getenv', 'which_secret',
  'checkpoint', 'force_checkpoint', 'st_read', 'json_execute_serialized_sql', 'sql_auto_complete',
  'icu_calendar_names', 'test_all_types', 'enable_logging', 'disable_logging', 'truncate_duckdb_logs',
] as const;

export function deniedFunction(name: string): boolean {
  const lower = name.toLowerCase();
  return DENIED_FUNCTIONS.some((d) => (d.endsWith('_') ? lower.startsWith(d) : lower === d));
}

export async function validateSql(sql: unknown, parser: SqlParser): Promise<Validation> {
  const text = checkSqlText(sql);
  if (!text.ok) return { ok: false, message: text.message, reason: 'text' };
  const parsed = await parser.parse(sql as string);
  if (parsed.kind === 'syntax-error') {
    return { ok: false, message: `SQL syntax error: ${parsed.message}`, reason: 'syntax' };
  }
  if (parsed.statementCount === 0) {
    return { ok: false, message: 'SQL is required: send one SELECT statement in the `sql` field.', reason: 'text' };
  }
  if (parsed.statementCount > 1) {
    // A PIVOT without an IN (…) list expands to two statements, so it is refused here too.
    return { ok: false, message: 'Only one statement is allowed per query.', reason: 'statement' };
  }
  if (!parsed.isSelect) return { ok: false, message: ONLY_SELECT_MESSAGE, reason: 'statement' };
  const denied = parsed.functions.find(deniedFunction);
  if (denied) return { ok: false, message: `Function not allowed: ${denied}`, reason: 'function' };
  return { ok: true, tables: parsed.tables };
}
