/**
 * The API's client of the query-runner's internal HTTP API (schemas in `@uda/shared/runner-contract`).
 *
 * Routing: the query id's rendezvous owner first. We move on to the next runner only when the
 * connection was refused, that is before the request was sent, so a query never runs twice.
 * Anything else (a reset, a timeout, a runner dying mid-query) is QUERY_BACKEND_UNAVAILABLE.
 */
import {
  lookupResponseSchema,
  type LookupRequest,
  type LookupResponse,
  queryResponseSchema,
  runnerErrorSchema,
  type QueryResponse,
  type ResultFormat,
  type RunQueryRequest,
  type RunnerErrorCode,
  sheetSearchResponseSchema,
  type SheetSearchRequest,
  type SheetSearchResponse,
} from '@uda/shared/runner-contract';
import type { RunnerPool } from './pool.ts';
import { rankRunners } from './rendezvous.ts';

export class RunnerCallError extends Error {
  override readonly name = 'RunnerCallError';
  readonly code: RunnerErrorCode;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: RunnerErrorCode, message: string, retryAfterSeconds?: number) {
    super(message);
    this.code = code;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export interface RunnerClientOptions {
  readonly pool: RunnerPool;
  /** Longer than the runner's own query time limit, so that the runner reports the timeout. */
  readonly requestTimeoutMs: number;
  /** Retry-After sent with QUERY_BACKEND_UNAVAILABLE. */
  readonly unavailableRetryAfterSeconds?: number;
}

export class RunnerClient {
  private readonly options: RunnerClientOptions;

  constructor(options: RunnerClientOptions) {
    this.options = options;
  }

  runQuery(request: RunQueryRequest): Promise<QueryResponse> {
    return this.call(request.queryId, '/v1/queries', { method: 'POST', body: JSON.stringify(request) });
  }

  /** A stored result in a format, produced lazily by the runner on first ask. */
  storedResult(queryId: string, format: ResultFormat): Promise<QueryResponse> {
    return this.call(queryId, `/v1/results/${encodeURIComponent(queryId)}/${format}`, { method: 'GET' });
  }

  /** A stored-source keyword lookup; any runner can answer it, so it is routed by its text. */
  lookup(request: LookupRequest): Promise<LookupResponse> {
    const route = `${request.source}\n${request.keywords}`;
    return this.call(route, '/v1/lookups', { method: 'POST', body: JSON.stringify(request) }, (body) => lookupResponseSchema.parse(body));
  }

  /** Keyword search of one connected sheet; any runner can answer it, so it is routed by its object key. */
  searchSheet(request: SheetSearchRequest): Promise<SheetSearchResponse> {
    return this.call(request.key, '/v1/sheets/search', { method: 'POST', body: JSON.stringify(request) }, (body) => sheetSearchResponseSchema.parse(body));
  }

  private async call<T = QueryResponse>(
    routeKey: string,
    path: string,
    init: { method: string; body?: string },
    parse: (body: unknown) => T = (body) => queryResponseSchema.parse(body) as T,
  ): Promise<T> {
    const runners = rankRunners(routeKey, this.options.pool.ready());
    for (const runner of runners) {
      let response: Response;
      try {
        response = await fetch(`${runner}${path}`, {
          ...init,
          headers: { 'Content-Type': 'application/json' },
          signal: AbortSignal.timeout(this.options.requestTimeoutMs),
        });
      } catch (error) {
        if (connectionRefused(error)) continue;
        throw this.unavailable();
      }
      return this.parse(response, parse);
    }
    throw this.unavailable();
  }

  private async parse<T>(response: Response, parse: (body: unknown) => T): Promise<T> {
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      throw this.unavailable();
    }
    if (response.ok) {
      try {
        return parse(body);
      } catch {
        throw new RunnerCallError('INTERNAL', 'the query-runner sent a malformed result');
      }
    }
    const error = runnerErrorSchema.safeParse(body);
    if (!error.success) throw this.unavailable();
    throw new RunnerCallError(error.data.code, error.data.message, error.data.retryAfterSeconds);
  }

  private unavailable(): RunnerCallError {
    return new RunnerCallError(
      'QUERY_BACKEND_UNAVAILABLE',
      'The query service is temporarily unavailable. Nothing was charged; please retry.',
      this.options.unavailableRetryAfterSeconds ?? 5,
    );
  }
}

function connectionRefused(error: unknown): boolean {
  const cause = (error as { cause?: { code?: string } }).cause;
  return cause?.code === 'ECONNREFUSED';
}
