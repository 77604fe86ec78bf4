/**
 * `npm start` supervises what it starts, as a Deployment would: a child that exits
 * while the service is not stopping is started again after a back-off, so one crash never stops
 * the whole service. The API answers 503 with Retry-After while its runner is away.
 */
import type { ChildProcess } from 'node:child_process';

export const RESTART = {
  /** The first restart waits this long; each further crash in a row doubles it… */
  firstMs: 1_000,
  /** …up to this. */
  maxMs: 30_000,
  /** A child that ran this long before it exited counts as healthy: the next restart is quick again. */
  healthyMs: 60_000,
} as const;

/** The wait before restart number `crashes` in a row (1 = the first). */
export function restartDelayMs(crashes: number, { firstMs, maxMs } = RESTART): number {
  return Math.min(maxMs, firstMs * 2 ** Math.min(20, Math.max(0, crashes - 1)));
}

/** Crashes in a row after one exit: back to 1 when the child had run long enough to count as healthy. */
export function crashesAfterExit(previous: number, ranMs: number, { healthyMs } = RESTART): number {
  return ranMs >= healthyMs ? 1 : previous + 1;
}

export interface Supervised {
  /** The running child, if any (none while waiting to restart). */
  current(): ChildProcess | undefined;
  /** No more restarts; SIGTERM to the running child, resolved once it exited. */
  stop(): Promise<void>;
}

export interface SuperviseOptions {
  readonly name: string;
  readonly start: () => ChildProcess;
  readonly log: (line: string) => void;
}

export function supervise({ name, start, log }: SuperviseOptions): Supervised {
  let child: ChildProcess | undefined;
  let stopped = false;
  let crashes = 0;
  let timer: NodeJS.Timeout | undefined;

  const launch = () => {
    timer = undefined;
    const startedAt = Date.now();
    child = start();
    log(`[start] ${name} running (pid ${child.pid})`);
    child.once('exit', (code, signal) => {
      child = undefined;
      if (stopped) return;
      crashes = crashesAfterExit(crashes, Date.now() - startedAt);
      const delay = restartDelayMs(crashes);
      log(`[start] ${name} exited (${signal ?? code}); restarting in ${delay / 1000} s`);
      timer = setTimeout(launch, delay);
    });
  };
  launch();

  return {
    current: () => child,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      const running = child;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      await new Promise((resolve) => (running.once('exit', resolve), running.kill('SIGTERM')));
    },
  };
}
