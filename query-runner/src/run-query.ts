/**
 * One execution from a leased database to a stored result: open the connection (or a one-query
 * sandbox when connected sheets are named), run under the limits, write Parquet (and JSON when it
 * was asked for), and return the index entry. Nothing here decides about caching or locks.
 */
import { mkdir, rm } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { ObjectStore } from '@uda/shared/object-store';
import type { ResultMeta, RunQueryRequest } from '@uda/shared/runner-contract';
import { rowsBySource } from '@uda/shared/sql';
import type { DatabaseLease } from './database-manager.ts';
import { RunnerError } from './errors.ts';
import { execute } from './execute.ts';
import type { Execution, ExecutionLimits } from './execute.ts';
import { resultKey } from './result-store.ts';
import type { ResultStore } from './result-store.ts';
import type { ResultWriter } from './result-writer.ts';
import { openSheetSandbox } from './sandbox.ts';
import type { SandboxLimits } from './sandbox.ts';

export interface RunDeps {
  readonly store: ObjectStore;
  readonly results: ResultStore;
  readonly writer: ResultWriter;
  readonly limits: ExecutionLimits;
  readonly sandboxLimits: SandboxLimits;
  readonly scratchDir: string;
  readonly resultTtlMs: number;
  /** Aborted when shutdown's grace period ends: running queries are interrupted. */
  readonly shutdown: AbortSignal;
}

export interface RunOutcome {
  readonly meta: ResultMeta;
  readonly rows: Record<string, unknown>[];
}

export async function runAndStore(deps: RunDeps, lease: DatabaseLease, request: RunQueryRequest, tables: string[]): Promise<RunOutcome> {
  const execution = await executeOn(deps, lease, request);
  const createdAt = Date.now();
  const meta = await store(deps, request, execution, createdAt);
  return {
    meta: {
      ...meta,
      tables,
      rowsBySource: rowsBySource(tables, execution.rows.length),
      dataVersion: lease.database.version,
    },
    rows: execution.rows,
  };
}

async function executeOn(deps: RunDeps, lease: DatabaseLease, request: RunQueryRequest): Promise<Execution> {
  if (request.datasets.length === 0) {
    const connection = await lease.database.instance.connect();
    return withClose(connection, () => execute(connection, request.sql, deps.limits, deps.shutdown));
  }
  const folder = join(deps.scratchDir, `sheets-${request.queryId}-${Date.now()}`);
  try {
    const sheets = await downloadSheets(deps.store, request.datasets, folder);
    const { instance, connection } = await openSheetSandbox(lease.database.path, deps.sandboxLimits, sheets);
    try {
      return await execute(connection, request.sql, deps.limits, deps.shutdown);
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

async function withClose<T>(connection: DuckDBConnection, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } finally {
    connection.closeSync();
  }
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

async function store(deps: RunDeps, request: RunQueryRequest, execution: Execution, createdAt: number) {
  const path = join(deps.scratchDir, `${request.queryId}-${createdAt}.parquet`);
  try {
    // DuckDB writes the Parquet file on its own threads while this thread serializes the JSON.
    const [parquet, json] = await Promise.all([
      deps.writer.writeParquet(execution.columns, execution.chunks, deps.limits.maxRows, path)
        .then(() => deps.results.putFile(resultKey(request.queryId, createdAt, 'parquet'), path, 'parquet')),
      request.format === 'json' ? deps.results.putRows(resultKey(request.queryId, createdAt, 'json'), execution.rows) : undefined,
    ]);
    return baseMeta(request, execution, createdAt, deps.resultTtlMs, { parquet, ...(json ? { json } : {}) });
  } finally {
    await rm(path, { force: true });
  }
}

function baseMeta(
  request: RunQueryRequest,
  execution: Execution,
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
