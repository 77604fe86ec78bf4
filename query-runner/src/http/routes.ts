/**
 * The runner's internal HTTP API, every route in one list (STYLE §1). Handlers only translate:
 * zod in, QueryService call, zod-checked JSON out. Errors go to the one error handler. Query
 * answers carry their rows as the stored JSON text, spliced in unparsed: plain JSON by default,
 * the result envelope (`RESULT_ENVELOPE_TYPE`) for a caller that asks for it.
 */
import express from 'express';
import type { ErrorRequestHandler, Request, Response } from 'express';
import type { Logger } from '@uda/shared/logger';
import { lookupRequestSchema, queryResultHeadSchema, RESULT_ENVELOPE_TYPE, resultFormatSchema, runQueryRequestSchema } from '@uda/shared/runner-contract';
import { jsonWithRawField } from '@uda/shared/raw-json';
import { sheetSearchRequestSchema, sheetSearchResponseSchema } from '@uda/shared/runner-contract';
import type { SheetSearchRequest, SheetSearchResponse } from '@uda/shared/runner-contract';
import { z } from 'zod';
import { ObjectStoreError } from '@uda/shared/object-store';
import { RunnerError, SANDBOX_REFUSAL_MESSAGE, unavailableError } from '../errors.ts';
import type { RunnerMetrics } from '../metrics.ts';
import type { QueryService, ServedResult } from '../query-service.ts';
import type { LookupRequest, QueryResultHead } from '@uda/shared/runner-contract';
import { requireRunnerToken } from './runner-token.ts';

export interface AppDeps {
  readonly service: QueryService;
  readonly metrics: RunnerMetrics;
  readonly logger: Logger;
  readonly ready: () => boolean;
  /** False once SIGTERM arrived: new queries are refused so the pod drains. */
  readonly accepting: () => boolean;
  readonly serveMetrics: boolean;
  /** The response body, `{"results":[…],"total":n}`, as bytes. */
  readonly lookup: (request: LookupRequest) => Promise<Buffer>;
  readonly sheetSearch: (request: SheetSearchRequest) => Promise<SheetSearchResponse>;
  /** The bearer token every caller but the probes sends. */
  readonly token: string;
}

const resultParams = z.object({ queryId: z.uuid(), format: resultFormatSchema });

export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  // SQL is at most 10,000 characters; the body limit leaves room for datasets and JSON escaping.
  app.use(express.json({ limit: '256kb' }));
  app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
  app.get('/readyz', (_req, res) => {
    const ready = deps.ready() && deps.accepting();
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready' });
  });
  if (deps.serveMetrics) app.get('/metrics', metricsHandler(deps.metrics));
  app.use(requireRunnerToken({ token: deps.token }));
  app.post('/v1/queries', timed(deps, async (req, res) => {
    if (!deps.accepting()) throw new RunnerError('QUERY_BACKEND_UNAVAILABLE', 'The query runner is shutting down.', 1);
    const parsed = runQueryRequestSchema.safeParse(req.body);
    if (!parsed.success) throw new RunnerError('QUERY_INVALID', `Invalid request: ${z.prettifyError(parsed.error)}`);
    return deps.service.run(parsed.data, callerGone(res));
  }));
  app.get('/v1/results/:queryId/:format', timed(deps, async (req) => {
    const parsed = resultParams.safeParse(req.params);
    if (!parsed.success) throw new RunnerError('QUERY_INVALID', 'Expected /v1/results/<uuid>/<json|csv|parquet>.');
    return deps.service.stored(parsed.data.queryId, parsed.data.format);
  }));
  app.post('/v1/lookups', async (req, res) => {
    if (!deps.accepting()) throw new RunnerError('QUERY_BACKEND_UNAVAILABLE', 'The query runner is shutting down.', 1);
    const parsed = lookupRequestSchema.safeParse(req.body);
    if (!parsed.success) throw new RunnerError('QUERY_INVALID', `Invalid request: ${z.prettifyError(parsed.error)}`);
    // The body's rows are spliced in as stored JSON (`run-lookup.ts`): sent as the bytes they are.
    res.type('application/json').send(await deps.lookup(parsed.data));
  });
  app.post('/v1/sheets/search', async (req, res) => {
    if (!deps.accepting()) throw new RunnerError('QUERY_BACKEND_UNAVAILABLE', 'The query runner is shutting down.', 1);
    const parsed = sheetSearchRequestSchema.safeParse(req.body);
    if (!parsed.success) throw new RunnerError('QUERY_INVALID', `Invalid request: ${z.prettifyError(parsed.error)}`);
    res.json(sheetSearchResponseSchema.parse(await deps.sheetSearch(parsed.data)));
  });
  app.use((_req, res) => void res.status(404).json({ code: 'RESULT_NOT_FOUND', message: 'No such route.' }));
  app.use(errorHandler(deps));
  return app;
}

export function metricsHandler(metrics: RunnerMetrics) {
  return async function metricsRoute(_req: Request, res: Response) {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  };
}

/**
 * Aborts when the connection closes before the answer was sent: the API gave up (its deadline, its
 * own client gone), so the query's worker is killed at once instead of running on for nobody.
 */
function callerGone(res: Response): AbortSignal {
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) gone.abort(unavailableError('The caller stopped waiting for the query.', 1));
  });
  return gone.signal;
}

/** Runs a handler, records its duration by outcome, and validates the response head. */
function timed(deps: AppDeps, handler: (req: Request, res: Response) => Promise<ServedResult>) {
  return async function timedRoute(req: Request, res: Response) {
    const stop = deps.metrics.duration.startTimer();
    try {
      const served = await handler(req, res);
      const head = queryResultHeadSchema.parse(served.head);
      stop({ outcome: head.cached ? 'cached' : 'ok' });
      sendResult(req, res, head, served.rowsJson);
    } catch (error) {
      stop({ outcome: error instanceof RunnerError ? error.code : 'INTERNAL' });
      throw error;
    }
  };
}

const NEWLINE = Buffer.from('\n');

function sendResult(req: Request, res: Response, head: QueryResultHead, rowsJson: Buffer | undefined): void {
  if (req.accepts(['application/json', RESULT_ENVELOPE_TYPE]) === RESULT_ENVELOPE_TYPE) {
    res.type(RESULT_ENVELOPE_TYPE).send(Buffer.concat([Buffer.from(JSON.stringify(head)), NEWLINE, rowsJson ?? Buffer.alloc(0)]));
    return;
  }
  res.type('application/json; charset=utf-8').send(rowsJson ? jsonWithRawField(head, 'rows', rowsJson) : Buffer.from(JSON.stringify(head)));
}

function errorHandler(deps: AppDeps): ErrorRequestHandler {
  return function runnerErrorHandler(error, _req, res, _next) {
    const known = error instanceof RunnerError ? error : (asStoreOutage(error) ?? asClientError(error));
    // The caller gets a plain 503; the log keeps what the store said, or the outage has no cause.
    if (error instanceof ObjectStoreError) deps.logger.warn({ err: error }, 'result store unavailable');
    if (known) {
      countError(deps.metrics, known);
      if (known.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(known.retryAfterSeconds));
      res.status(known.status).json(known.toBody());
      return;
    }
    // A 500 never carries internal text (STYLE §3); the log has it.
    deps.logger.error({ err: error }, 'internal error');
    res.status(500).json({ code: 'INTERNAL', message: 'Internal error in the query runner.' });
  };
}

/** The object store being down is the service's fault: 503 with Retry-After, not a 500. */
function asStoreOutage(error: unknown): RunnerError | undefined {
  return error instanceof ObjectStoreError ? unavailableError('The result store is unavailable; retry shortly.') : undefined;
}

/** Body-parser failures (bad JSON, too large) are the caller's fault, not a 500. */
function asClientError(error: unknown): RunnerError | undefined {
  const status = (error as { status?: unknown }).status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new RunnerError('QUERY_INVALID', 'The request body is not valid JSON or is too large.');
  }
  return undefined;
}

function countError(metrics: RunnerMetrics, error: RunnerError): void {
  if (error.code === 'QUERY_TIMEOUT') metrics.timeouts.inc();
  if (error.code === 'QUERY_BUSY') metrics.busy.inc();
  if (error.code === 'QUERY_RESULT_TOO_LARGE') metrics.tooLarge.inc();
  if (error.message === SANDBOX_REFUSAL_MESSAGE) metrics.sandboxRefusals.inc();
}
