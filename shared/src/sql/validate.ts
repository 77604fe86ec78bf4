/**
 * The SQL validator shared by the API (to fail fast) and the runner (always, before it runs
 * anything). It sits on top of the runner's DuckDB sandbox, never instead of it (DECISIONS §6).
 */
import { SEARCH_TABLE_PREFIX } from '../catalog.ts';
import { checkSqlText, ONLY_SELECT_MESSAGE } from './text-rules.ts';
import {
  isAllowedFunction,
  isAllowedInformationSchemaView,
  isAllowedShow,
  isAllowedTableFunction,
} from './allow-list.ts';
import type { QueryReferences, SqlParser, TableReference } from './parser.ts';

export type Validation =
  | { ok: true; tables: string[] }
  | { ok: false; message: string; reason: 'text' | 'syntax' | 'statement' | 'function' };

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
  const refused = refusedReference(parsed.references, parser.engineRelations);
  if (refused) return { ok: false, message: refused, reason: 'function' };
  return { ok: true, tables: parsed.tables };
}

/** The first name the allow-list does not cover, as the message the user gets; undefined when all are covered. */
export function refusedReference(references: QueryReferences, engineRelations: ReadonlySet<string>): string | undefined {
  const fn = references.functions.find((name) => !isAllowedFunction(name));
  if (fn !== undefined) return `Function not allowed: ${fn}`;
  const tableFn = references.tableFunctions.find((name) => !isAllowedTableFunction(name));
  if (tableFn !== undefined) return `Function not allowed: ${tableFn}`;
  const relation = references.relations.find((r) => !isAllowedRelation(r, engineRelations));
  if (relation) return `Table not allowed: ${[relation.catalog, relation.schema, relation.name].filter(Boolean).join('.')}`;
  const show = references.shows.find((name) => !isAllowedShow(name));
  if (show !== undefined) return `Table not allowed: ${show}`;
  return undefined;
}

/**
 * Our tables, the caller's sheets and the query's own CTEs are unqualified names (or `main.x`).
 * Other catalogs and schemas, and the engine's own views (`pg_settings`, `duckdb_tables`), are
 * refused; of `information_schema`, the views that show only what the query could read anyway.
 * A file path as a table name is left to the sandbox, which refuses every file. The lookup search
 * index (`_search_*`) is ours, not data: it is not billed, so SQL may not read it.
 */
function isAllowedRelation(relation: TableReference, engineRelations: ReadonlySet<string>): boolean {
  const schema = relation.schema.toLowerCase();
  if (relation.catalog !== '') return false;
  if (relation.name.toLowerCase().startsWith(SEARCH_TABLE_PREFIX)) return false;
  if (schema === 'information_schema') return isAllowedInformationSchemaView(relation.name);
  if (schema !== '' && schema !== 'main') return false;
  return !engineRelations.has(relation.name.toLowerCase());
}
