/**
 * One execution from a leased database to a stored result: hand the query to a worker process
 * (which opens the sandbox, or a one-query sandbox when connected sheets are named, runs under the
 * limits and writes Parquet), store Parquet (and JSON when it was asked for), and return the index
 * entry. Nothing here decides about caching or locks.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, rename, rm } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { ObjectStore } from '@uda/shared/object-store';
import type { ResultMeta, RunQueryRequest } from '@uda/shared/runner-contract';
import { rowsBySource } from '@uda/shared/sql';
import type { DatabaseLease } from './database-manager.ts';
import { RunnerError } from './errors.ts';
import type { ExecutionLimits } from './execute.ts';
import { resultKey, rowsJson } from './result-store.ts';
import type { ResultStore } from './result-store.ts';
import type { QueryPool, RunPlace } from './workers/pool.ts';
import type { WorkerOutcome } from './workers/protocol.ts';

export interface RunDeps {
  readonly store: ObjectStore;
  readonly results: ResultStore;
  readonly pool: QueryPool;
  readonly limits: ExecutionLimits;
  readonly scratchDir: string;
  readonly resultTtlMs: number;
  /** Aborted when shutdown's grace period ends: running queries are interrupted. */
  readonly shutdown: AbortSignal;
}

/** Where a run stops waiting: the caller's signal (shutdown included) and the queue's bound. */
export interface RunBounds {
  readonly signal: AbortSignal;
  readonly waitUntil: number;
}

export interface RunOutcome {
  readonly meta: ResultMeta;
  /** Format `json` only: the rows' JSON array text, made once for the store and the answer. */
  readonly rowsJson?: Buffer;
}

export async function runAndStore(deps: RunDeps, lease: DatabaseLease, request: RunQueryRequest, tables: string[], bounds: RunBounds): Promise<RunOutcome> {
  const createdAt = Date.now();
  // A name of this run's own: two runs of one query (a lock that lapsed) never share a scratch file.
  const parquetPath = join(deps.scratchDir, `run-${randomUUID()}.parquet`);
  const written = `${parquetPath}.part`;
  try {
    const execution = await executeInWorker(deps, lease, request, written, bounds);
    // Published by rename: only a finished file is read from here on.
    await rename(written, parquetPath);
    const json = request.format === 'json' ? rowsJson(execution.rows) : undefined;
    const meta = await store(deps, request, execution, createdAt, parquetPath, json);
    return {
      meta: {
        ...meta,
        tables,
        rowsBySource: rowsBySource(tables, execution.rows.length),
        dataVersion: lease.database.version,
      },
      ...(json ? { rowsJson: json } : {}),
    };
  } finally {
    await Promise.all([rm(parquetPath, { force: true }), rm(written, { force: true })]);
  }
}

/** The query runs in a worker process (`workers/pool.ts`), which also writes the Parquet file. */
async function executeInWorker(deps: RunDeps, lease: DatabaseLease, request: RunQueryRequest, parquetPath: string, bounds: RunBounds): Promise<WorkerOutcome> {
  const task = { sql: request.sql, dbPath: lease.database.path, limits: deps.limits, parquetPath };
  if (request.datasets.length === 0) return deps.pool.run({ ...task, sheets: [] }, placeOf(request, bounds));
  const folder = join(deps.scratchDir, `sheets-${randomUUID()}`);
  try {
    const sheets = await downloadSheets(deps.store, request.datasets, folder);
    return await deps.pool.run({ ...task, sheets }, placeOf(request, bounds));
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

function placeOf(request: RunQueryRequest, bounds: RunBounds): RunPlace {
  return { signal: bounds.signal, tenant: request.tenant, capacityClass: request.capacityClass, waitUntil: bounds.waitUntil };
}

async function downloadSheets(store: ObjectStore, datasets: RunQueryRequest['datasets'], folder: string) {
  await mkdir(folder, { recursive: true });
  return Promise.all(
    datasets.map(async ({ name, key }, i) => {
      const object = await store.get(key);
      if (!object) throw new RunnerError('QUERY_INVALID', `Connected sheet "${name}" is not available.`);
      const path = join(folder, `${i}.parquet`);
      await pipeline(object.body, createWriteStream(path));
      return { name, path };
    }),
  );
}

async function store(deps: RunDeps, request: RunQueryRequest, execution: WorkerOutcome, createdAt: number, parquetPath: string, rows: Buffer | undefined) {
  const [parquet, json] = await Promise.all([
    deps.results.putFile(resultKey(request.queryId, createdAt, 'parquet'), parquetPath, 'parquet'),
    rows ? deps.results.putRows(resultKey(request.queryId, createdAt, 'json'), rows) : undefined,
  ]);
  return baseMeta(request, execution, createdAt, deps.resultTtlMs, { parquet, ...(json ? { json } : {}) });
}

function baseMeta(
  request: RunQueryRequest,
  execution: WorkerOutcome,
  createdAt: number,
  ttlMs: number,
  objects: ResultMeta['objects'],
): ResultMeta {
  return {
    queryId: request.queryId,
    rowCount: execution.rows.length,
    truncated: execution.truncated,
    sqlExecuted: execution.sqlExecuted,
    columns: execution.columns,
    tables: [],
    rowsBySource: {},
    dataVersion: '',
    createdAt: new Date(createdAt).toISOString(),
    expiresAt: createdAt + ttlMs,
    objects,
  };
}
