/**
 * A query worker: a child process of the runner with its own DuckDB instances. It runs
 * one query at a time and is disposable: the runner kills it on the hard deadline or when its
 * memory passes the ceiling, and starts a fresh one. Nothing here outlives a kill but the OS page
 * cache of `service.db`, which every worker shares.
 */
import type { DuckDBInstance } from '@duckdb/node-api';
import { execute } from '../execute.ts';
import type { Execution } from '../execute.ts';
import { RunnerError } from '../errors.ts';
import { createResultWriter } from '../result-writer.ts';
import { openSandbox, openSheetSandbox } from '../sandbox.ts';
import type { SandboxLimits } from '../sandbox.ts';
import type { ParentMessage, TaskMessage, WorkerMessage } from './protocol.ts';

let sandboxLimits: SandboxLimits | undefined;
/** The database version this worker has open; a query on another version reopens. */
let open: { path: string; instance: DuckDBInstance } | undefined;
const writer = await createResultWriter();

const send = (message: WorkerMessage) => process.send?.(message);

process.on('message', (message: ParentMessage) => {
  if (message.kind === 'init') {
    sandboxLimits = message.sandboxLimits;
    // A failed open is reported by the first query that needs the database, not here.
    const opened = message.dbPath ? databaseInstance(message.dbPath, message.sandboxLimits).catch(() => undefined) : Promise.resolve();
    void opened.then(() => send({ kind: 'ready' }));
    return;
  }
  send({ kind: 'started', id: message.id });
  void runTask(message).then(
    (outcome) => send({ kind: 'done', id: message.id, outcome }),
    (error: unknown) => send({ kind: 'failed', id: message.id, error: bodyOf(error), ...(error instanceof RunnerError ? {} : { detail: String(error) }) }),
  );
});
// A worker never outlives its runner, even a SIGKILLed one: the closed channel, or a new parent
// (the orphan is re-parented), ends it. SIGKILL to itself, because a normal exit waits for the
// DuckDB threads of a running query.
const parent = process.ppid;
const die = () => process.kill(process.pid, 'SIGKILL');
process.on('disconnect', die);
setInterval(() => {
  if (process.ppid !== parent) die();
}, 500).unref();

async function runTask(task: TaskMessage) {
  const execution = await executeTask(task);
  // The sandbox cannot write files by design; the writer is a separate instance that never sees user text.
  await writer.writeParquet(execution.columns, execution.chunks, task.limits.maxRows, task.parquetPath);
  return { columns: execution.columns, rows: execution.rows, truncated: execution.truncated, sqlExecuted: execution.sqlExecuted };
}

async function executeTask(task: TaskMessage): Promise<Execution> {
  const limits = sandboxLimits;
  if (!limits) throw new Error('worker used before init');
  if (task.sheets.length > 0) {
    const sandbox = await openSheetSandbox(task.dbPath, limits, task.sheets);
    try {
      return await execute(sandbox.connection, task.sql, task.limits);
    } finally {
      sandbox.connection.closeSync();
      sandbox.instance.closeSync();
    }
  }
  const instance = await databaseInstance(task.dbPath, limits);
  const connection = await instance.connect();
  try {
    return await execute(connection, task.sql, task.limits);
  } finally {
    connection.closeSync();
  }
}

async function databaseInstance(path: string, limits: SandboxLimits): Promise<DuckDBInstance> {
  if (open?.path === path) return open.instance;
  open?.instance.closeSync();
  open = { path, instance: await openSandbox(path, limits) };
  return open.instance;
}

function bodyOf(error: unknown) {
  if (error instanceof RunnerError) return error.toBody();
  return { code: 'INTERNAL' as const, message: 'The query failed inside the service.' };
}
