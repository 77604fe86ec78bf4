/**
 * DuckDB's own parser, used to read a query's shape (DECISIONS §3 and §6: no regular expressions
 * for statement kinds or tables). It runs on a private in-memory instance that never executes the
 * user's text: `extractStatements` and `getTableNames` only parse, and `json_serialize_sql` takes
 * the text as a bound string parameter.
 */
import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDBConnection } from '@duckdb/node-api';
import { sanitizeEngineMessage } from '../duckdb/engine-text.ts';
import { lockDown, lockedInstanceOptions } from '../duckdb/lockdown.ts';

/** A table reference as the parser wrote it; empty strings for parts the query left out. */
export interface TableReference {
  readonly catalog: string;
  readonly schema: string;
  readonly name: string;
}

/** Everything a query names, read from the serialized tree (the allow-list checks these). */
export interface QueryReferences {
  /** Scalar, aggregate and window functions and operators, lower-case. */
  readonly functions: string[];
  /** Functions in FROM (`range(10)`), lower-case. */
  readonly tableFunctions: string[];
  readonly relations: TableReference[];
  /** `SHOW x` targets without a query (`SHOW TABLES`), unquoted. */
  readonly shows: string[];
  /**
   * Relation names whose rows the query reads, lower-case: every relation except those only
   * described (`DESCRIBE t`, `SHOW t`). SUMMARIZE reads the rows, so its table counts (billing).
   */
  readonly readRelations: string[];
}

export type ParseResult =
  | { kind: 'syntax-error'; message: string }
  | { kind: 'parsed'; statementCount: number; isSelect: boolean; tables: string[]; references: QueryReferences };

export interface SqlParser {
  parse(sql: string): Promise<ParseResult>;
  /** Names of the engine's own views and tables (`pg_settings`, `duckdb_tables`, …), lower-case. */
  readonly engineRelations: ReadonlySet<string>;
  close(): void;
}

interface SerializedSql {
  error: boolean;
  error_type?: string;
  error_message?: string;
  statements?: unknown[];
}

export async function createSqlParser(): Promise<SqlParser> {
  const instance = await DuckDBInstance.create(
    ':memory:',
    await lockedInstanceOptions({ memoryLimit: '256MB', threads: 1, maxTempSize: '0B' }),
  );
  const setup = await instance.connect();
  const engineRelations = await listEngineRelations(setup);
  await lockDown(setup);
  setup.closeSync();
  return {
    engineRelations,
    async parse(sql) {
      // One connection per call: a DuckDB connection runs one statement at a time.
      const connection = await instance.connect();
      try {
        return await parseOn(connection, sql);
      } finally {
        connection.closeSync();
      }
    },
    close: () => instance.closeSync(),
  };
}

async function parseOn(connection: DuckDBConnection, sql: string): Promise<ParseResult> {
  const reader = await connection.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR)', [sql]);
  const serialized = JSON.parse(String(reader.getRows()[0]?.[0] ?? '{}')) as SerializedSql;
  // json_serialize_sql refuses every statement kind but SELECT ("not implemented"); SHOW,
  // DESCRIBE, SUMMARIZE, VALUES, TABLE x, FROM-first and PIVOT … IN (…) arrive as SELECT nodes.
  if (!serialized.error) {
    const statements = serialized.statements ?? [];
    const references = collectReferences(statements);
    // Billing: only tables whose rows are read; a DESCRIBE or SHOW of a table costs nothing.
    const read = new Set(references.readRelations);
    const tables = statements.length === 1 ? [...connection.getTableNames(sql, false)].filter((t) => read.has(t.toLowerCase())) : [];
    return { kind: 'parsed', statementCount: statements.length, isSelect: statements.length > 0, tables, references };
  }
  // Not a plain SELECT list: the statement extractor tells a syntax error from a count of other statements.
  try {
    const statementCount = (await connection.extractStatements(sql)).count;
    return { kind: 'parsed', statementCount, isSelect: false, tables: [], references: collectReferences([]) };
  } catch (error) {
    return { kind: 'syntax-error', message: sanitizeEngineMessage(error instanceof Error ? error.message : String(error)) };
  }
}

/** Views and tables the engine brings along, in any schema (`pg_catalog`, `main`, `information_schema`). */
async function listEngineRelations(connection: DuckDBConnection): Promise<ReadonlySet<string>> {
  const reader = await connection.runAndReadAll(
    "SELECT lower(view_name) FROM duckdb_views() WHERE internal UNION SELECT lower(table_name) FROM duckdb_tables() WHERE internal",
  );
  return new Set(reader.getRows().map((row) => String(row[0])));
}

type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node => value !== null && typeof value === 'object' && !Array.isArray(value);
const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const unquote = (name: string): string => name.replace(/^"(.*)"$/, '$1').replaceAll('""', '"');

/** Every function, table function, relation and SHOW target anywhere in the serialized tree. */
function collectReferences(statements: unknown[]): QueryReferences {
  const found: QueryReferences = { functions: [], tableFunctions: [], relations: [], shows: [], readRelations: [] };
  const visit = (node: unknown, schemaOnly = false): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item, schemaOnly);
      return;
    }
    if (!isNode(node)) return;
    if (node.type === 'SHOW_REF' && node.show_type !== 'SUMMARY') schemaOnly = true;
    if (node.type === 'TABLE_FUNCTION' && isNode(node.function)) {
      found.tableFunctions.push(text(node.function.function_name).toLowerCase());
      visit(node.function.children, schemaOnly);
      for (const [key, value] of Object.entries(node)) if (key !== 'function') visit(value, schemaOnly);
      return;
    }
    if (node.type === 'BASE_TABLE') {
      found.relations.push({ catalog: text(node.catalog_name), schema: text(node.schema_name), name: text(node.table_name) });
      if (!schemaOnly) found.readRelations.push(text(node.table_name).toLowerCase());
    }
    if (node.type === 'SHOW_REF' && node.query === null) found.shows.push(unquote(text(node.table_name)));
    if (typeof node.function_name === 'string') found.functions.push(node.function_name.toLowerCase());
    for (const value of Object.values(node)) visit(value, schemaOnly);
  };
  visit(statements);
  return found;
}
