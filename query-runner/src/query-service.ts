/**
 * The runner's core, free of HTTP (STYLE §7): validate, serve a stored result when the window is
 * open, otherwise take the per-query lock, run, store, index, and release the lock in every outcome.
 */
import { allTables } from '@uda/shared/catalog';
import type { Logger } from '@uda/shared/logger';
import type { QueryResultHead, ResultFormat, ResultMeta, RunQueryRequest } from '@uda/shared/runner-contract';
import { validateSql } from '@uda/shared/sql';
import type { SqlParser } from '@uda/shared/sql';
import type { Coordination } from './coordination.ts';
import type { DatabaseManager } from './database-manager.ts';
import { busyError, RunnerError, unavailableError } from './errors.ts';
import type { Limiter } from './limiter.ts';
import type { RunnerMetrics } from './metrics.ts';
import type { ResultStore } from './result-store.ts';
import { runAndStore } from './run-query.ts';
import type { RunBounds, RunDeps } from './run-query.ts';

export interface QueryServiceDeps extends RunDeps {
  readonly parser: SqlParser;
  readonly coordination: Coordination;
  readonly databases: DatabaseManager;
  readonly limiter: Limiter;
  readonly metrics: RunnerMetrics;
  readonly results: ResultStore;
  readonly lockTtlMs: number;
  /** How long a query may wait for a slot and then a worker before it is refused (503, retry). */
  readonly queueWaitMs: number;
  readonly logger: Logger;
}

/** An answer: the head, and for format `json` the rows' JSON array text, served as it was stored. */
export interface ServedResult {
  readonly head: QueryResultHead;
  readonly rowsJson?: Buffer;
}

const CATALOG_TABLES = new Set(allTables());
const BUSY_RETRY_CAP_S = 5;

export class QueryService {
  private readonly deps: QueryServiceDeps;

  constructor(deps: QueryServiceDeps) {
    this.deps = deps;
  }

  /** `signal` aborts when the caller stopped waiting: a waiting query leaves the queue, a running one is killed. */
  async run(request: RunQueryRequest, signal?: AbortSignal): Promise<ServedResult> {
    const tables = await this.validate(request);
    const stored = await this.deps.coordination.index.get(request.queryId);
    if (stored) return this.serveStored(stored, request.format);
    const stop = signal ? AbortSignal.any([this.deps.shutdown, signal]) : this.deps.shutdown;
    // One bound for the whole wait, slot then worker: past it the caller hears 503 and retries.
    const waitUntil = Date.now() + this.deps.queueWaitMs;
    return this.deps.limiter.run(() => this.runLocked(request, tables, { signal: stop, waitUntil }), {
      signal: stop, waitUntil, tenant: request.tenant, capacityClass: request.capacityClass,
    });
  }

  /** `GET /v1/results/:queryId/:format`: a stored result only; never runs SQL. */
  async stored(queryId: string, format: ResultFormat): Promise<ServedResult> {
    const meta = await this.deps.coordination.index.get(queryId);
    if (!meta) throw new RunnerError('RESULT_NOT_FOUND', 'No stored result for this query id; run the query first.');
    return this.serveStored(meta, format);
  }

  private async validate(request: RunQueryRequest): Promise<string[]> {
    const clash = request.datasets.find((d) => CATALOG_TABLES.has(d.name));
    if (clash) throw new RunnerError('QUERY_INVALID', `Dataset name "${clash.name}" is the name of a service table.`);
    const result = await validateSql(request.sql, this.deps.parser);
    if (result.ok) return result.tables;
    this.deps.metrics.validatorRefusals.inc({ reason: result.reason });
    throw new RunnerError('QUERY_INVALID', result.message);
  }

  private async runLocked(request: RunQueryRequest, tables: string[], bounds: RunBounds): Promise<ServedResult> {
    const attempt = await this.deps.coordination.locks.acquire(request.queryId, this.deps.lockTtlMs);
    // The lock's remaining life bounds the wait, but most queries end well before it: hint a short
    // retry, which then finds the stored result.
    if (!attempt.acquired) throw busyError(Math.min(BUSY_RETRY_CAP_S, Math.ceil(attempt.retryAfterMs / 1000)));
    try {
      // Another runner may have finished between our index read and our lock.
      const stored = await this.deps.coordination.index.get(request.queryId);
      if (stored) return await this.serveStored(stored, request.format);
      return await this.execute(request, tables, bounds);
    } finally {
      await attempt.lock.release().catch((error: unknown) => this.deps.logger.warn({ err: error }, 'lock release failed; it will expire'));
    }
  }

  private async execute(request: RunQueryRequest, tables: string[], bounds: RunBounds): Promise<ServedResult> {
    const lease = this.deps.databases.lease();
    if (!lease) throw unavailableError('The query service is starting and has no database open yet.');
    try {
      this.deps.metrics.executions.inc();
      const outcome = await runAndStore(this.deps, lease, request, tables, bounds);
      await this.deps.coordination.index.put(outcome.meta);
      const served = await this.ensureFormat(outcome.meta, request.format);
      return { head: { cached: false, format: request.format, result: served }, ...(outcome.rowsJson ? { rowsJson: outcome.rowsJson } : {}) };
    } finally {
      lease.release();
    }
  }

  private async serveStored(meta: ResultMeta, format: ResultFormat): Promise<ServedResult> {
    this.deps.metrics.cacheHits.inc();
    const served = await this.ensureFormat(meta, format);
    const rowsJson = format === 'json' && served.objects.json ? await this.deps.results.readRows(served.objects.json) : undefined;
    return { head: { cached: true, format, result: served }, ...(rowsJson ? { rowsJson } : {}) };
  }

  /** CSV and JSON are produced on first request and recorded in the index for every runner. */
  private async ensureFormat(meta: ResultMeta, format: ResultFormat): Promise<ResultMeta> {
    if (format === 'parquet' || meta.objects[format]) return meta;
    const updated = await this.deps.results.produce(meta, format);
    await this.deps.coordination.index.update(updated);
    return updated;
  }
}
