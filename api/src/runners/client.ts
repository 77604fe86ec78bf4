/**
 * The API's client of the query-runner's internal HTTP API (schemas in `@uda/shared/runner-contract`).
 *
 * Routing: the query id's rendezvous owner first. We move on to the next runner only when the
 * connection was refused, that is before the request was sent, so a query never runs twice.
 * Anything else (a reset, a timeout, a runner dying mid-query) is QUERY_BACKEND_UNAVAILABLE.
 * Query answers come as the result envelope: the head is checked, the rows stay JSON text. A runner
 * from before the envelope answers plain JSON whatever the Accept; during a rolling deploy that is
 * read too.
 */
import { z } from 'zod';
import {
  lookupResponseSchema,
  type LookupRequest,
  type LookupResponse,
  queryResponseSchema,
  queryResultHeadSchema,
  type QueryResultHead,
  RESULT_ENVELOPE_TYPE,
  runnerAuthorization,
  rowSchema,
  runnerErrorSchema,
  type ResultFormat,
  type RunQueryRequest,
  RunnerError,
  sheetSearchResponseSchema,
  type SheetSearchRequest,
  type SheetSearchResponse,
} from '@uda/shared/runner-contract';
import type { RunnerPool } from './pool.ts';
import { rankRunners } from './rendezvous.ts';

/** A runner's answer to a query: the checked head, and for format `json` the rows' JSON array text. */
export interface RunnerResult extends QueryResultHead {
  readonly rowsJson?: Buffer;
}

/** The rows as objects, for the few callers that look into them (sheet queries). */
export function rowsOf(result: RunnerResult): Record<string, unknown>[] {
  return result.rowsJson ? z.array(rowSchema).parse(JSON.parse(result.rowsJson.toString('utf8'))) : [];
}

export interface RunnerClientOptions {
  readonly pool: RunnerPool;
  /** Longer than the runner's own query time limit, so that the runner reports the timeout. */
  readonly requestTimeoutMs: number;
  /** The runners' bearer token (RUNNER_TOKEN), sent on every call. */
  readonly token: string;
  /** Retry-After sent with QUERY_BACKEND_UNAVAILABLE. */
  readonly unavailableRetryAfterSeconds?: number;
}

export class RunnerClient {
  private readonly options: RunnerClientOptions;

  constructor(options: RunnerClientOptions) {
    this.options = options;
  }

  /**
   * The stored result while its window is open, otherwise the query runs: one call either way.
   * `signal`: the caller went away; the call is dropped, and the runner then kills the query.
   */
  runQuery(request: RunQueryRequest, signal?: AbortSignal): Promise<RunnerResult> {
    return this.call(request.queryId, '/v1/queries', { method: 'POST', body: JSON.stringify(request) }, resultOf, signal);
  }

  /** A stored result in a format, produced lazily by the runner on first ask; never runs SQL. */
  storedResult(queryId: string, format: ResultFormat): Promise<RunnerResult> {
    return this.call(queryId, `/v1/results/${encodeURIComponent(queryId)}/${format}`, { method: 'GET' }, resultOf);
  }

  /** A stored-source keyword lookup; any runner can answer it, so it is routed by its text. */
  lookup(request: LookupRequest): Promise<LookupResponse> {
    const route = `${request.source}\n${request.keywords}`;
    return this.call(route, '/v1/lookups', { method: 'POST', body: JSON.stringify(request) }, jsonOf(lookupResponseSchema));
  }

  /** Keyword search of one connected sheet; any runner can answer it, so it is routed by its object key. */
  searchSheet(request: SheetSearchRequest): Promise<SheetSearchResponse> {
    return this.call(request.key, '/v1/sheets/search', { method: 'POST', body: JSON.stringify(request) }, jsonOf(sheetSearchResponseSchema));
  }

  private async call<T>(routeKey: string, path: string, init: { method: string; body?: string }, parse: BodyParser<T>, caller?: AbortSignal): Promise<T> {
    const runners = rankRunners(routeKey, this.options.pool.ready());
    const deadline = AbortSignal.timeout(this.options.requestTimeoutMs);
    // Dropping the connection is how the runner learns we stopped waiting: it then kills the query.
    const signal = caller ? AbortSignal.any([deadline, caller]) : deadline;
    const started = performance.now();
    const gaveUp = () => (signal.aborted ? this.unavailable(Math.round(performance.now() - started)) : this.unavailable());
    for (const runner of runners) {
      let response: Response;
      try {
        response = await fetch(`${runner}${path}`, {
          ...init,
          headers: { 'Content-Type': 'application/json', Accept: `${RESULT_ENVELOPE_TYPE}, application/json`, ...runnerAuthorization(this.options.token) },
          signal,
        });
      } catch (error) {
        if (connectionRefused(error)) continue;
        throw gaveUp();
      }
      return this.parse(response, parse, gaveUp);
    }
    throw this.unavailable();
  }

  private async parse<T>(response: Response, parse: BodyParser<T>, gaveUp: () => RunnerError): Promise<T> {
    let body: Buffer;
    try {
      body = Buffer.from(await response.arrayBuffer());
    } catch {
      throw gaveUp();
    }
    if (response.ok) {
      try {
        return parse(body, response.headers.get('content-type') ?? '');
      } catch {
        throw new RunnerError('INTERNAL', 'the query-runner sent a malformed result');
      }
    }
    const error = runnerErrorSchema.safeParse(parsedJson(body));
    if (!error.success) throw this.unavailable();
    throw new RunnerError(error.data.code, error.data.message, error.data.retryAfterSeconds, error.data.workerMs);
  }

  /** `waitedMs`: we stopped waiting (deadline, caller gone) after this long, while the runner worked. */
  private unavailable(waitedMs?: number): RunnerError {
    return new RunnerError(
      'QUERY_BACKEND_UNAVAILABLE',
      'The query service is temporarily unavailable. Nothing was charged; please retry.',
      this.options.unavailableRetryAfterSeconds ?? 5,
      waitedMs,
    );
  }
}

/** Reads a 2xx body, given its Content-Type. */
type BodyParser<T> = (body: Buffer, contentType: string) => T;

function jsonOf<T>(schema: z.ZodType<T>): BodyParser<T> {
  return (body) => schema.parse(JSON.parse(body.toString('utf8')));
}

function parsedJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** The result envelope: line one is the head; the rest, when there is any, the rows' JSON text. */
function resultOf(body: Buffer, contentType: string): RunnerResult {
  if (!contentType.startsWith(RESULT_ENVELOPE_TYPE)) return plainResultOf(body);
  const newline = body.indexOf(0x0a);
  if (newline < 0) throw new Error('not a result envelope');
  const head = queryResultHeadSchema.parse(JSON.parse(body.subarray(0, newline).toString('utf8')));
  const rows = body.subarray(newline + 1);
  return rows.length > 0 ? { ...head, rowsJson: rows } : head;
}

/** An older runner's answer: the head and the parsed rows in one JSON object (read, not the hot path). */
function plainResultOf(body: Buffer): RunnerResult {
  const { rows, ...head } = queryResponseSchema.parse(JSON.parse(body.toString('utf8')));
  return rows ? { ...head, rowsJson: Buffer.from(JSON.stringify(rows)) } : head;
}

function connectionRefused(error: unknown): boolean {
  const cause = (error as { cause?: { code?: string } }).cause;
  return cause?.code === 'ECONNREFUSED';
}
