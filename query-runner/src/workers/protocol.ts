/**
 * Messages between the runner and its query workers (child processes, `worker-main.ts`). Every
 * field is plain data: it crosses a process boundary over Node's IPC channel.
 */
import type { RunnerErrorBody } from '@uda/shared/runner-contract';
import type { ExecutionLimits } from '../execute.ts';
import type { SandboxLimits, SheetFile } from '../sandbox.ts';

/** Sent once, right after the worker starts. */
export interface InitMessage {
  readonly kind: 'init';
  readonly sandboxLimits: SandboxLimits;
  /** The database the last query used, opened before the worker says it is ready: its first query need not. */
  readonly dbPath?: string;
}

/** One query: execute on `dbPath` (or a sheet sandbox when `sheets` is not empty), write `parquetPath`. */
export interface TaskMessage {
  readonly kind: 'task';
  readonly id: number;
  readonly sql: string;
  readonly dbPath: string;
  readonly sheets: readonly SheetFile[];
  readonly limits: ExecutionLimits;
  readonly parquetPath: string;
}

export type ParentMessage = InitMessage | TaskMessage;

export interface WorkerOutcome {
  readonly columns: { name: string; type: string }[];
  readonly rows: Record<string, unknown>[];
  readonly truncated: boolean;
  readonly sqlExecuted: string;
}

export type WorkerMessage =
  | { readonly kind: 'ready' }
  /** The task arrived: from here on, a dying worker may have been killed by the query itself. */
  | { readonly kind: 'started'; readonly id: number }
  | { readonly kind: 'done'; readonly id: number; readonly outcome: WorkerOutcome }
  /** `detail` is internal text for the runner's log, never for the user. */
  | { readonly kind: 'failed'; readonly id: number; readonly error: RunnerErrorBody; readonly detail?: string };
