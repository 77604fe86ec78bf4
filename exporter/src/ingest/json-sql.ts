/**
 * JSON-array files that DuckDB reads itself (`read_json`, `.gz` read natively). Every field is read
 * as JSON and checked for its JSON type before it is converted, so a number where a string belongs
 * is an error, not the text "5". A JSON array has no useful lines: errors name the item (0-based,
 * as the items are counted in the file).
 *
 * The file is never held whole: `read_json` parses an array in buffers as it streams it (counting
 * the items of a 264 MB papers file at scale 1 raised RSS by 48 MB, under a 200 MB DuckDB limit).
 */
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { brokenCheck, firstBreaking, ident, raiseOnBroken, sqlString, type RowCheck, type SqlSource } from './sql-source.ts';
import { InputError } from './table-spec.ts';

/** `string?` and `date?` may be null; the others may not. */
export type JsonField = 'string' | 'string?' | 'string[]' | 'boolean' | 'date?';

export interface JsonArraySql {
  /** The path under the input folder that error messages name; `<file>.gz` is read when `<file>` is absent. */
  readonly file: string;
  /** The fields each item must have, in table order. */
  readonly fields: Readonly<Record<string, JsonField>>;
}

const nonStrings = (field: string) => `len(list_filter(json_extract(${field}, '$[*]'), e -> json_type(e) <> 'VARCHAR')) > 0`;

/** What makes a field's JSON wrong for its kind (JSON null and a missing key both read as NULL). */
function fieldCheck(name: string, kind: JsonField): RowCheck {
  const field = ident(name);
  const failsWhen = {
    string: `json_type(${field}) IS DISTINCT FROM 'VARCHAR'`,
    'string?': `${field} IS NOT NULL AND json_type(${field}) <> 'VARCHAR'`,
    'string[]': `json_type(${field}) IS DISTINCT FROM 'ARRAY' OR ${nonStrings(field)}`,
    boolean: `json_type(${field}) IS DISTINCT FROM 'BOOLEAN'`,
    'date?': `${field} IS NOT NULL AND (json_type(${field}) <> 'VARCHAR' OR try_cast(${field} ->> '$' AS DATE) IS NULL)`,
  }[kind];
  const expected = { string: 'a string', 'string?': 'a string or null', 'string[]': 'a list of strings', boolean: 'true or false', 'date?': 'a date or null' }[kind];
  return { failsWhen, reason: `${sqlString(`${name} is not ${expected}: `)} || coalesce(${field}::VARCHAR, 'missing')` };
}

function converted(name: string, kind: JsonField): string {
  const field = ident(name);
  const value = { string: `${field} ->> '$'`, 'string?': `${field} ->> '$'`, 'string[]': `${field}::VARCHAR[]`, boolean: `${field}::BOOLEAN`, 'date?': `(${field} ->> '$')::DATE` }[kind];
  return `${value} AS ${field}`;
}

/** The items of the array as rows of JSON values, one column per field. */
function itemsSql(path: string, json: JsonArraySql): string {
  const columns = Object.keys(json.fields).map((name) => `${sqlString(name)}: 'JSON'`);
  return `SELECT * FROM read_json(${sqlString(path)}, format = 'array', columns = {${columns.join(', ')}}, maximum_object_size = 16777216)`;
}

/** The file as published: plain, or gzipped beside it. */
async function resolve(inputDir: string, json: JsonArraySql): Promise<string> {
  for (const candidate of [json.file, `${json.file}.gz`]) {
    const path = join(inputDir, candidate);
    if (await access(path).then(() => true, () => false)) return path;
  }
  throw new InputError(json.file, undefined, 'file not found (plain or .gz)');
}

/** DuckDB's reasons for a file that is not a JSON array of objects. */
function jsonReason(message: string): string | undefined {
  const malformed = /Malformed JSON in file "[^"]*", (.*)/.exec(message)?.[1];
  if (malformed) return `invalid JSON: ${malformed.split('\n')[0]!.trim()}`;
  if (/Expected top-level JSON array|array of/i.test(message)) return 'expected a JSON array';
  return undefined;
}

/** `json` under `inputDir` as a source the builder loads with one INSERT … SELECT. */
export function jsonArraySource(inputDir: string, json: JsonArraySql): SqlSource {
  const checks = Object.entries(json.fields).map(([name, kind]) => fieldCheck(name, kind));
  return {
    async select() {
      const path = await resolve(inputDir, json);
      const columns = Object.entries(json.fields).map(([name, kind]) => converted(name, kind));
      return `SELECT ${columns.join(', ')} FROM (${itemsSql(path, json)})${raiseOnBroken(json.file, checks)}`;
    },
    async inputError(connection: DuckDBConnection, error: unknown) {
      const broken = brokenCheck(error);
      if (broken) {
        const first = await firstBreaking(connection, itemsSql(await resolve(inputDir, json), json), checks[broken.check]!);
        return new InputError(json.file, undefined, first ? `item ${first.record - 1}: ${first.reason}` : broken.reason);
      }
      const reason = jsonReason(error instanceof Error ? error.message : String(error));
      return reason ? new InputError(json.file, undefined, reason) : undefined;
    },
    estimatedRows: async () => undefined,
  };
}
