/**
 * The runner's errors (STYLE §3): the one error class, `RunnerError`, lives in the shared runner
 * contract (the API's client rebuilds the same class from the answer); here are the runner's
 * factories of it. Handlers throw it; the Express error handler turns it into
 * `{code, message, retryAfterSeconds?}`. Anything else becomes INTERNAL with a fixed message.
 */
import { RunnerError } from '@uda/shared/runner-contract';
import { sanitizeEngineMessage } from '@uda/shared/duckdb';

export { RunnerError };

export const timeoutError = (limitMs: number) =>
  new RunnerError('QUERY_TIMEOUT', `The query ran longer than the ${Math.round(limitMs / 1000)} s limit and was stopped.`);

export const tooLargeError = (limitBytes: number) =>
  new RunnerError(
    'QUERY_RESULT_TOO_LARGE',
    `The result is larger than ${Math.round(limitBytes / (1024 * 1024))} MB. Select fewer or shorter columns.`,
  );

export const cellTooLargeError = (column: string, limits: { maxCellBytes: number; maxRows: number }) =>
  new RunnerError(
    'QUERY_RESULT_TOO_LARGE',
    `A value in column "${column}" is too large: one value may hold at most ${Math.round(limits.maxCellBytes / 1024)} KB ` +
      `and a list at most ${limits.maxRows.toLocaleString('en-US')} elements, so that one row never carries a whole table. ` +
      'Return the rows themselves, or aggregate fewer of them.',
  );

export const busyError = (retryAfterSeconds: number) =>
  new RunnerError('QUERY_BUSY', 'The same query is still running; retry shortly.', Math.max(1, retryAfterSeconds));

export const unavailableError = (message: string, retryAfterSeconds = 5) =>
  new RunnerError('QUERY_BACKEND_UNAVAILABLE', message, retryAfterSeconds);

/** Sandbox refusals and engine errors use the engine's own words only after paths are removed. */
const SANDBOX_MARKERS = ['Permission Error', 'disabled by configuration', 'configuration has been locked', 'read-only mode'];

export function isSandboxRefusal(engineMessage: string): boolean {
  return SANDBOX_MARKERS.some((marker) => engineMessage.includes(marker));
}

/** An engine error in the user's query, as QUERY_INVALID with a message that holds no paths. */
export const SANDBOX_REFUSAL_MESSAGE =
  'The query tried an operation the SQL service does not allow (files, settings, extensions or writes).';

export function engineError(error: unknown): RunnerError {
  const text = error instanceof Error ? error.message : String(error);
  if (isSandboxRefusal(text)) return new RunnerError('QUERY_INVALID', SANDBOX_REFUSAL_MESSAGE);
  return new RunnerError('QUERY_INVALID', sanitizeEngineMessage(text));
}
