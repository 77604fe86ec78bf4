/**
 * The one soft deadline for DuckDB work: `interrupt()` at the limit (or when `signal` aborts), and
 * a piece of work cut by it reported as `DeadlineExceeded`, never as an engine error or a complete
 * answer (an interrupted stream can end without an error). Work DuckDB cannot interrupt (one huge
 * scalar call) is bounded by the runner's worker processes, not here.
 */
import type { DuckDBConnection } from '@duckdb/node-api';

export class DeadlineExceeded extends Error {
  override readonly name = 'DeadlineExceeded';
  readonly timeoutMs: number;

  constructor(timeoutMs: number) {
    super(`The work ran longer than ${timeoutMs} ms and was interrupted.`);
    this.timeoutMs = timeoutMs;
  }
}

/** `work` gets `stopped()`, true once the deadline passed or `signal` aborted, to end a fetch loop. */
export async function withDeadline<T>(
  connection: DuckDBConnection,
  timeoutMs: number,
  work: (stopped: () => boolean) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  let timedOut = false;
  const interrupt = () => connection.interrupt();
  signal?.addEventListener('abort', interrupt);
  // Armed before the work starts: DuckDB may compute a whole result inside its first call.
  const timer = setTimeout(() => {
    timedOut = true;
    connection.interrupt();
  }, timeoutMs);
  try {
    const result = await work(() => timedOut || signal?.aborted === true);
    if (timedOut) throw new DeadlineExceeded(timeoutMs);
    return result;
  } catch (error) {
    if (timedOut) throw new DeadlineExceeded(timeoutMs);
    throw error;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', interrupt);
  }
}
