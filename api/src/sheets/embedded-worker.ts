/**
 * The embedded default (DECISIONS §1, no DATABASE_URL) runs the sheets ingestion worker inside the
 * API process, on the same PGlite database and object store. This is the one place the API uses
 * the exporter workspace's code: a single-process deployment has no other process to run it.
 * PGlite accepts `SELECT … FOR UPDATE SKIP LOCKED` (one connection, so claims simply serialise);
 * see embedded-worker.test.ts.
 */
import type { SheetsWorker } from '@uda/exporter/sheets/worker';
import { startSheetsWorker } from '@uda/exporter/sheets/worker';
import { embeddedWorkerSettings } from '@uda/exporter/sheets/config';
import type { Services } from '../services.ts';

export function startEmbeddedSheetsWorker(services: Services): SheetsWorker {
  return startSheetsWorker({
    db: services.db,
    store: services.store,
    logger: services.logger.child({ component: 'sheets-worker' }),
    settings: embeddedWorkerSettings(services.config.SHEETS_MAX_UPLOAD_MB),
  });
}
