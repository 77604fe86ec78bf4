/**
 * The query-runner process: config, logger, the composition in `runner.ts`, and signal handling.
 * SIGTERM drains (stop accepting, finish or interrupt within SHUTDOWN_GRACE_MS, release locks).
 */
import { createLogger } from '@uda/shared/logger';
import { loadRunnerConfig } from './config.ts';
import { startRunner } from './runner.ts';

const config = loadRunnerConfig();
const logger = createLogger({ name: 'query-runner', level: config.LOG_LEVEL });
const runner = await startRunner(config, logger);
// One line on stdout that parent processes (the embedded start script, tests) can read.
process.stdout.write(`${JSON.stringify({ event: 'listening', url: runner.url, metricsUrl: runner.metricsUrl })}\n`);

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    runner.shutdown(config.SHUTDOWN_GRACE_MS).then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}
