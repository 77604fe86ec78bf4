/**
 * The sheets worker as the embedded default runs it inside the API process (DECISIONS §1): the
 * exporter's side of the declared interface `@uda/shared/sheets-worker`, wired in by the start
 * script (`scripts/api.ts`), on the API's database, object store and upload cap.
 */
import type { StartEmbeddedSheetsWorker } from '@uda/shared/sheets-worker';
import { embeddedWorkerSettings } from './config.ts';
import { startSheetsWorker } from './worker.ts';

export const startEmbeddedSheetsWorker: StartEmbeddedSheetsWorker = ({ db, store, logger, maxUploadMb }) =>
  startSheetsWorker({ db, store, logger, settings: embeddedWorkerSettings(maxUploadMb) });
