/**
 * `node exporter/src/sheets/main.ts`: the sheets ingestion worker as its own process. SIGTERM
 * finishes the current job and exits; a second signal exits at once, which is safe too: the
 * abandoned job's lease expires and another worker retries it.
 */
import knexModule from 'knex';
import { loadConfigOrExit } from '@uda/shared/config';
import { createLogger } from '@uda/shared/logger';
import { createObjectStore } from '@uda/shared/object-store';
import { loadSheetsWorkerConfig, workerSettings } from './config.ts';
import { startSheetsWorker } from './worker.ts';

const config = loadConfigOrExit(() => loadSheetsWorkerConfig(process.env));
const logger = createLogger({ name: 'sheets-worker', level: config.LOG_LEVEL });
const db = knexModule.knex({ client: 'pg', connection: config.DATABASE_URL, pool: { min: 0, max: 2 } });
const store = createObjectStore(config);
const worker = startSheetsWorker({ db, store, logger, settings: workerSettings(config) });

let stopping = false;
const shutdown = (signal: string) => {
  if (stopping) process.exit(1);
  stopping = true;
  logger.info({ signal }, 'sheets worker stopping after the current job');
  void worker
    .stop()
    .then(() => db.destroy())
    .then(() => logger.info('sheets worker stopped'));
};
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));
// Logged once the signal handlers are in place: from here on SIGTERM is always graceful.
logger.info({ store: store.description, pollMs: config.SHEETS_POLL_MS }, 'sheets worker started');
