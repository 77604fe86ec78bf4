/**
 * Our own SQL (lookups, sheet search) under the query deadline: the shared `withDeadline`
 * interrupts at the limit, and a query cut by it is reported as QUERY_TIMEOUT, never as an engine
 * error or a complete answer.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { DeadlineExceeded, withDeadline as interruptAt } from '@uda/shared/duckdb';
import { engineError, RunnerError, timeoutError } from './errors.ts';

export async function withDeadline<T>(connection: DuckDBConnection, timeoutMs: number, work: () => Promise<T>): Promise<T> {
  try {
    return await interruptAt(connection, timeoutMs, work);
  } catch (error) {
    throw runnerErrorOf(error);
  }
}

/** The runner's words for a failure under a deadline. */
export function runnerErrorOf(error: unknown): RunnerError {
  if (error instanceof RunnerError) return error;
  if (error instanceof DeadlineExceeded) return timeoutError(error.timeoutMs);
  return engineError(error);
}

/**
 * The deadline of synchronous work (the lookups' in-memory ranking), which `withDeadline`'s timer
 * cannot stop: the timer never fires while the work holds the event loop. The work calls the
 * returned check between blocks; it throws once `timeoutMs` from now has passed.
 */
export function deadlineCheck(timeoutMs: number): () => void {
  const expiresAt = performance.now() + timeoutMs;
  return () => {
    if (performance.now() >= expiresAt) throw new DeadlineExceeded(timeoutMs);
  };
}
