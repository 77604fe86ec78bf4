/**
 * Runs one validated SELECT on a sandboxed connection, bounded by construction (STYLE §9): a row
 * cap in the SQL itself, a deadline enforced with `interrupt()`, and a byte cap checked chunk by
 * chunk while the result streams in.
 */
import type { DuckDBConnection, DuckDBDataChunk, DuckDBResult } from '@duckdb/node-api';
import { DeadlineExceeded, jsonValue, withDeadline } from '@uda/shared/duckdb';
import { runnerErrorOf } from './deadline.ts';
import { cellTooLargeError, tooLargeError, unavailableError } from './errors.ts';

export interface ExecutionLimits {
  readonly maxRows: number;
  readonly timeoutMs: number;
  readonly maxBytes: number;
  /** One value (string, blob, list, map, struct) as JSON; a list also holds at most `maxRows` elements. */
  readonly maxCellBytes: number;
}

export interface Execution {
  readonly columns: { name: string; type: string }[];
  readonly rows: Record<string, unknown>[];
  /** Raw chunks, for the Parquet writer; they may hold one probe row past `maxRows`. */
  readonly chunks: DuckDBDataChunk[];
  readonly truncated: boolean;
  readonly sqlExecuted: string;
}

// A trailing `;` (with comments or spaces after it) would end the subquery early.
// `SELECT 1;;` is still one statement to DuckDB, so every trailing `;` goes.
const TRAILING_TERMINATOR = /(?:;(?:\s|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*)+$/;

/** SPEC rule 3: the row count is capped whatever LIMIT the user wrote, by wrapping the query. */
export function capRows(sql: string, limit: number): string {
  // The newline before `)` keeps a trailing `-- comment` from swallowing the parenthesis.
  return `SELECT * FROM (\n${sql.replace(TRAILING_TERMINATOR, '').trimEnd()}\n) AS capped LIMIT ${limit}`;
}

/** `signal` aborts from outside (shutdown after the grace period): the query ends as unavailable. */
export async function execute(
  connection: DuckDBConnection,
  sql: string,
  limits: ExecutionLimits,
  signal?: AbortSignal,
): Promise<Execution> {
  const shuttingDown = () => unavailableError('The query runner is shutting down; retry the query.', 1);
  // A query that waited in the queue past shutdown's grace period must not start at all.
  if (signal?.aborted) throw shuttingDown();
  try {
    const collected = await withDeadline(
      connection,
      limits.timeoutMs,
      async (stopped) => {
        // One probe row past the cap tells us whether the result was truncated.
        const result = await connection.stream(capRows(sql, limits.maxRows + 1));
        return collect(result, limits, stopped);
      },
      signal,
    );
    // DECISIONS §6: an interrupted stream can end without an error, so a cut result looks complete.
    if (signal?.aborted) throw shuttingDown();
    return { ...collected, sqlExecuted: capRows(sql, limits.maxRows) };
  } catch (error) {
    if (signal?.aborted && !(error instanceof DeadlineExceeded)) throw shuttingDown();
    throw runnerErrorOf(error);
  }
}

async function collect(result: DuckDBResult, limits: ExecutionLimits, stopped: () => boolean) {
  const names = result.deduplicatedColumnNames();
  const columns = names.map((name, i) => ({ name, type: result.columnType(i).toString() }));
  const rows: Record<string, unknown>[] = [];
  const chunks: DuckDBDataChunk[] = [];
  let bytes = 2;
  while (rows.length <= limits.maxRows && !stopped()) {
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) break;
    chunks.push(chunk);
    const values = chunk.convertRows(jsonValue);
    checkCells(values, names, limits);
    const chunkRows = values.map((row) => Object.fromEntries(names.map((name, i) => [name, row[i]])));
    // Measured per chunk (at most 2,048 rows), as JSON: stop at the limit instead of going on.
    bytes += Buffer.byteLength(JSON.stringify(chunkRows));
    if (bytes > limits.maxBytes) throw tooLargeError(limits.maxBytes);
    rows.push(...chunkRows);
  }
  const truncated = rows.length > limits.maxRows;
  return { columns, rows: rows.slice(0, limits.maxRows), chunks, truncated };
}

/**
 * One cell never carries a table: `list(t)` or `string_agg` over a whole table would
 * return every source row as one billed row. A list may hold no more elements than the row cap,
 * and no single value may be larger than `maxCellBytes` as JSON.
 */
function checkCells(rows: readonly (readonly unknown[])[], names: readonly string[], limits: ExecutionLimits): void {
  for (const row of rows) {
    for (let i = 0; i < row.length; i++) {
      const value = row[i];
      if (value === null || (typeof value !== 'string' && typeof value !== 'object')) continue;
      // A string's UTF-8 size is at most 3 bytes per UTF-16 unit: short strings skip the count.
      if (typeof value === 'string' && value.length * 3 <= limits.maxCellBytes) continue;
      const tooLong = Array.isArray(value) && value.length > limits.maxRows;
      if (tooLong || Buffer.byteLength(JSON.stringify(value)) > limits.maxCellBytes) {
        throw cellTooLargeError(names[i] ?? '', limits);
      }
    }
  }
}
