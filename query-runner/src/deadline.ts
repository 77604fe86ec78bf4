/**
 * Our own SQL (lookups, sheet search) under the query deadline: `interrupt()` at the limit, and a
 * query cut by it reported as QUERY_TIMEOUT, never as an engine error or a complete answer.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { engineError, RunnerError, timeoutError } from './errors.ts';

export async function withDeadline<T>(connection: DuckDBConnection, timeoutMs: number, work: () => Promise<T>): Promise<T> {
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    connection.interrupt();
  }, timeoutMs);
  try {
    return await work();
  } catch (error) {
    if (error instanceof RunnerError) throw error;
    throw timedOut ? timeoutError(timeoutMs) : engineError(error);
  } finally {
    clearTimeout(timer);
  }
}
