/**
 * DuckDB's own parser, used to read a query's shape (DECISIONS §3 and §6: no regular expressions
 * for statement kinds or tables). It runs on a private in-memory instance that never executes the
 * user's text: `extractStatements` and `getTableNames` only parse, and `json_serialize_sql` takes
 * the text as a bound string parameter.
 */
import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDBConnection } from '@duckdb/node-api';

export type ParseResult =
  | { kind: 'syntax-error'; message: string }
  | { kind: 'parsed'; statementCount: number; isSelect: boolean; tables: string[]; functions: string[] };

export interface SqlParser {
  parse(sql: string): Promise<ParseResult>;
  close(): void;
}

interface SerializedSql {
  error: boolean;
  error_type?: string;
  error_message?: string;
  statements?: unknown[];
}

export async function createSqlParser(): Promise<SqlParser> {
  const instance = await DuckDBInstance.create(':memory:', {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    threads: '1',
  });
  const setup = await instance.connect();
  await setup.run('SET enable_external_access = false');
  await setup.run('SET lock_configuration = true');
  setup.closeSync();
  return {
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
    const functions = [...collectFunctionNames(statements, new Set<string>())];
    const tables = statements.length === 1 ? [...connection.getTableNames(sql, false)] : [];
    return { kind: 'parsed', statementCount: statements.length, isSelect: statements.length > 0, tables, functions };
  }
  // Not a plain SELECT list: the statement extractor tells a syntax error from a count of other statements.
  try {
    const statementCount = (await connection.extractStatements(sql)).count;
    return { kind: 'parsed', statementCount, isSelect: false, tables: [], functions: [] };
  } catch (error) {
    return { kind: 'syntax-error', message: parserMessage(error) };
  }
}

/** Every `function_name` in the serialized tree: scalar, aggregate and table functions alike. */
function collectFunctionNames(node: unknown, into: Set<string>): Set<string> {
  if (Array.isArray(node)) {
    for (const item of node) collectFunctionNames(item, into);
  } else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'function_name' && typeof value === 'string') into.add(value.toLowerCase());
      else collectFunctionNames(value, into);
    }
  }
  return into;
}

/** The parser's own words ("syntax error at or near …") help the user; the prefix does not. */
function parserMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const firstLine = text.split('\n')[0] ?? '';
  return firstLine.replace(/^Failed to extract statements:\s*/, '').replace(/^Parser Error:\s*/, '');
}
