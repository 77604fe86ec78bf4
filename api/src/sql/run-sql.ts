/**
 * The SQL core shared by `POST /api/v1/query`, the CSV and Parquet GET routes, and the MCP
 * `run_sql` tool (STYLE §7: handlers only translate). It validates in the API before any runner
 * call, computes the query id, and makes one runner call, which serves the stored result inside the
 * 5-minute window or runs the query. It never charges: the caller delivers the result under its
 * `window` with `Billing.deliverWindow`, so the charge happens only once a result exists.
 *
 * A re-read of a result the caller already paid for (`alreadyPaid`, its re-read marker) is a
 * stored-only call: it never runs SQL, so it takes none of a run's checks, and when the result is
 * gone it falls through to the path below. That path takes the up-front checks of a query that
 * runs (402, daily cap: `beforeExecute`) before its one call, and gives them back when the runner
 * answers from the store (a stored result nobody paid for yet: free queries, a refunded charge). A
 * stored result never needs credit and never counts. When a check refuses, a stored result is still
 * served (a stored-only call); only a query that would have to run gets the refusal. So every run
 * is preceded by the checks, whatever the ledger said.
 */
import type { ResultFormat, ResultMeta, RunQueryRequest } from '@uda/shared/runner-contract';
import { createSqlParser, type SqlParser, validateSql } from '@uda/shared/sql';
import type { Tier } from '@uda/shared/catalog';
import { type WindowSpec, sqlWindow } from '../billing/index.ts';
import { ApiError } from '../errors/api-error.ts';
import { runnerPlaceOf } from '../fair/rules.ts';
import { ErrorCode } from '../errors/codes.ts';
import { RunnerError } from '@uda/shared/runner-contract';
import type { RunnerResult } from '../runners/client.ts';
import type { ObjectStore } from '@uda/shared/object-store';
import type { Db } from '../db/index.ts';
import type { FairShare } from '../fair/fair-share.ts';
import type { RunnerClient } from '../runners/client.ts';
import type { Manifests } from './export-version.ts';
import { queryIdOf } from './query-id.ts';
import { resolveDatasets } from '../sheets/resolve.ts';
import { backendUnavailable, sqlFailure } from './runner-errors.ts';
import { type SqlUsage, usageOf } from './usage.ts';

/** What running a query uses: the store and manifests, the runners, the sheets' table, the fair share. */
export interface SqlServices {
  readonly store: ObjectStore;
  readonly manifests: Manifests;
  readonly runners: RunnerClient;
  readonly db: Db;
  readonly fairShare: FairShare;
}

/** Gives back what `beforeExecute` took, when the query never ran. */
export type Undo = () => Promise<void>;

export interface SqlCaller {
  readonly accountId: string;
  readonly tier: Tier;
}

export interface RunSqlRequest {
  /** Checked here: the validator gives the spec's messages for a missing or oversized text. */
  readonly sql: unknown;
  readonly datasetIds: readonly string[];
  readonly format: ResultFormat;
}

export interface RunSqlHooks {
  /**
   * Runs just before a query is executed, never for a stored result: the up-front 402 and the daily
   * cap (DECISIONS §3, §4). Its undo runs when the query then never ran (busy, backend down).
   */
  readonly beforeExecute?: () => Promise<Undo | void>;
  /**
   * The charge key of this query's result the caller paid for within its window (undefined: none):
   * then the stored result is read, not run.
   */
  readonly alreadyPaid?: (queryId: string) => Promise<string | undefined>;
  /**
   * Takes the request's limits still pending (its burst count), alone: before a read of PostgreSQL
   * (connected sheets), which a flood must meet the burst limit before. `alreadyPaid` takes them otherwise.
   */
  readonly takeLimits?: () => Promise<void>;
  /** Aborts when the client went away: the runner call is dropped, and the runner kills the query. */
  readonly signal?: AbortSignal;
}

export interface SqlResult {
  readonly queryId: string;
  /** Served from the stored result of an earlier request in the window. */
  readonly cached: boolean;
  readonly meta: ResultMeta;
  /** Format `json` only: the JSON array text of at most 1,000 row objects, as the runner stored it. */
  readonly rowsJson?: Buffer;
  /** What the result costs this caller, charged once per `window`. */
  readonly usage: SqlUsage;
  readonly window: WindowSpec;
  /** The charge key `alreadyPaid` named, for the delivery's first look at the window (`WindowOptions.paidKey`). */
  readonly paidKey?: string;
}

let parser: Promise<SqlParser> | undefined;

export async function runSql(services: SqlServices, caller: SqlCaller, request: RunSqlRequest, hooks: RunSqlHooks = {}): Promise<SqlResult> {
  parser ??= createSqlParser();
  const validating = validateSql(request.sql, await parser);
  // The query id and the paid check need the text, not its parse: they run while DuckDB parses. A
  // refusal of the text still comes first; their own failure waits until it is known there is none.
  const targeting = typeof request.sql === 'string' ? targetOf(services, caller, request.sql, request.datasetIds, hooks) : undefined;
  targeting?.catch(() => undefined);
  const validation = await validating;
  if (!validation.ok) throw await invalidQuery(validation.message, targeting);
  const target = await targeting!;
  const run = { ...target.run, format: request.format };
  const response = await storedOrRun(services, caller, run, target.paidKey !== undefined, hooks);
  return {
    queryId: run.queryId,
    cached: response.cached,
    meta: response.result,
    ...(response.rowsJson ? { rowsJson: response.rowsJson } : {}),
    usage: usageOf(response.result, caller.tier),
    window: sqlWindow(caller.accountId, run.queryId, response.result.createdAt),
    ...(target.paidKey !== undefined ? { paidKey: target.paidKey } : {}),
  };
}

/** The text's refusal; but the burst limit's, which `targeting` may have taken with the paid check, comes first. */
async function invalidQuery(message: string, targeting: Promise<unknown> | undefined): Promise<ApiError> {
  const limited = await targeting?.then(
    () => undefined,
    (error: unknown) => (error instanceof ApiError && error.code === ErrorCode.RATE_LIMITED ? error : undefined),
  );
  return limited ?? new ApiError(ErrorCode.QUERY_INVALID, { message });
}

/** What to ask the runner (but the format), and whether the caller already paid for a stored result of it. */
async function targetOf(services: SqlServices, caller: SqlCaller, sql: string, datasetIds: readonly string[], hooks: RunSqlHooks) {
  if (datasetIds.length > 0) await hooks.takeLimits?.();
  const datasets = await resolveDatasets(services, caller.accountId, datasetIds);
  const exportVersion = await services.manifests.exportVersion().catch(() => {
    throw backendUnavailable();
  });
  const versions = datasets.map((d) => ({ id: d.id, version: String(d.version) }));
  const queryId = queryIdOf({ accountId: caller.accountId, sql, datasets: versions, exportVersion });
  const run = { queryId, sql, datasets: datasets.map(({ name, key }) => ({ name, key })), ...runnerPlaceOf(caller) };
  return { run, paidKey: await hooks.alreadyPaid?.(queryId) };
}

/** One runner call: the stored result or a run, with the run's checks taken first (see the top). */
async function storedOrRun(services: SqlServices, caller: SqlCaller, run: RunQueryRequest, alreadyPaid: boolean, hooks: RunSqlHooks): Promise<RunnerResult> {
  if (alreadyPaid) {
    const paid = await stored(services, run.queryId, run.format);
    if (paid) return paid;
  }
  // The caller's fair share is decided before any runner slot is taken (DECISIONS §4). Its first
  // try is sent with the checks, so it leaves in their write (one round trip); it counts only if they pass.
  const fair = services.fairShare.firstTry(caller);
  fair.catch(() => undefined);
  let undo: Undo | void;
  try {
    undo = await hooks.beforeExecute?.();
  } catch (refusal) {
    services.fairShare.drop(fair);
    const response = await stored(services, run.queryId, run.format);
    if (!response) throw refusal;
    return response;
  }
  const response = await services.fairShare.run(caller, () => services.runners.runQuery(run, hooks.signal), fair).catch(async (error: unknown) => {
    const failure = sqlFailure(error);
    if (neverRan(failure)) await undo?.();
    throw failure;
  });
  if (response.cached) await undo?.();
  return response;
}

/** The runner refused before running: the request counts toward nothing (DECISIONS §4). */
function neverRan(failure: ApiError): boolean {
  return failure.code === ErrorCode.QUERY_BUSY || failure.code === ErrorCode.QUERY_BACKEND_UNAVAILABLE || failure.code === ErrorCode.RUNNER_BUDGET_EXCEEDED || failure.code === ErrorCode.QUERY_CONCURRENCY_LIMITED;
}

/** The stored result while the window is open; undefined when the query has to run. */
async function stored(services: SqlServices, queryId: string, format: ResultFormat): Promise<RunnerResult | undefined> {
  try {
    return await services.runners.storedResult(queryId, format);
  } catch (error) {
    if (error instanceof RunnerError && error.code === 'RESULT_NOT_FOUND') return undefined;
    throw sqlFailure(error);
  }
}
