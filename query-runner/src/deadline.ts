/**
 * The runner's side of the one deadline (`withDeadline` in `@uda/shared/duckdb`): a failure under
 * it in the runner's words, where a query cut by the deadline is QUERY_TIMEOUT, never an engine
 * error or a complete answer; and the check for synchronous work the timer cannot stop.
 */
import { DeadlineExceeded } from '@uda/shared/duckdb';
import { engineError, RunnerError, timeoutError } from './errors.ts';

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
