/**
 * Progress of a table's load: rows, rate and ETA on a terminal (one line redrawn in place), plain
 * structured log lines otherwise. DuckDB knows how far through a query it is (a fraction), not how
 * many rows it has made, so rows on the way are estimated from the input's size (`estimatedRows`).
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Logger } from '@uda/shared/logger';

export interface LoadProgress {
  readonly table: string;
  /** 0 to 1: how far DuckDB is through the load. */
  readonly fraction: number;
  readonly elapsedSeconds: number;
  /** The table's expected size, when the input tells (a CSV's bytes over its bytes per row). */
  readonly estimatedRows?: number;
}

export interface ProgressSink {
  update(progress: LoadProgress): void;
  done(table: string, rows: number, seconds: number): void;
}

const count = (n: number) => Math.round(n).toLocaleString('en-US');

function clock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** `food_nutrients  47%  ~12,345,678 rows  1,050,000 rows/s  ETA 0:12` (rows and rate only when estimated). */
export function formatProgress(progress: LoadProgress): string {
  const parts = [progress.table, `${Math.floor(progress.fraction * 100)}%`];
  if (progress.estimatedRows !== undefined && progress.elapsedSeconds > 0) {
    const rows = progress.fraction * progress.estimatedRows;
    parts.push(`~${count(rows)} rows`, `${count(rows / progress.elapsedSeconds)} rows/s`);
  }
  const eta = progress.fraction > 0 ? (progress.elapsedSeconds * (1 - progress.fraction)) / progress.fraction : undefined;
  parts.push(eta === undefined ? 'ETA –' : `ETA ${clock(eta)}`);
  return parts.join('  ');
}

/** `food_nutrients  26,000,000 rows in 0:21  1,238,095 rows/s` */
export function formatDone(table: string, rows: number, seconds: number): string {
  return `${table}  ${count(rows)} rows in ${clock(seconds)}  ${count(seconds > 0 ? rows / seconds : rows)} rows/s`;
}

/** One line on the terminal, redrawn in place; the finished table's line stays. */
export function terminalSink(stream: NodeJS.WriteStream): ProgressSink {
  return {
    update: (progress) => stream.write(`\r${formatProgress(progress)}\x1b[K`),
    done: (table, rows, seconds) => stream.write(`\r${formatDone(table, rows, seconds)}\x1b[K\n`),
  };
}

/** Log lines: at most one progress line per `everySeconds` for a long load (the finished line is the job's own). */
export function logSink(logger: Logger, everySeconds = 10): ProgressSink {
  let last = 0;
  return {
    update(progress) {
      if (progress.elapsedSeconds - last < everySeconds) return;
      last = progress.elapsedSeconds;
      logger.info({ table: progress.table, percent: Math.floor(progress.fraction * 100), seconds: Math.round(progress.elapsedSeconds) }, 'table loading');
    },
    done() {
      last = 0;
    },
  };
}

/** Runs `load` while reporting DuckDB's progress through it every `everyMs`. */
export async function withProgress<T>(
  connection: DuckDBConnection,
  table: string,
  estimatedRows: number | undefined,
  sink: ProgressSink,
  load: () => Promise<T>,
  everyMs = 250,
): Promise<T> {
  const started = performance.now();
  const timer = setInterval(() => {
    // -1 while no query runs (between the statements of a load).
    const { percentage } = connection.progress;
    if (percentage >= 0) sink.update({ table, fraction: Math.min(percentage, 100) / 100, elapsedSeconds: (performance.now() - started) / 1000, estimatedRows });
  }, everyMs);
  try {
    return await load();
  } finally {
    clearInterval(timer);
  }
}
