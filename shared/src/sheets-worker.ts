/**
 * The declared interface between the API and the sheets ingestion worker (the exporter workspace).
 * The embedded default (DECISIONS §1, no DATABASE_URL) runs the worker inside the API process, on
 * the same PGlite database and object store, because a single-process deployment has no other
 * process to run it. The API only knows this interface; what starts the API in that mode (the
 * start script, `scripts/api.ts`) hands it the exporter's `startEmbeddedSheetsWorker`, so the API
 * workspace does not depend on the exporter's code.
 */
import type { Knex } from 'knex';
import type { Logger } from './logger.ts';
import type { ObjectStore } from './object-store/index.ts';

export interface EmbeddedSheetsWorkerDeps {
  readonly db: Knex;
  readonly store: ObjectStore;
  readonly logger: Logger;
  /** The API's upload cap (SHEETS_MAX_UPLOAD_MB): the worker ingests no more than the API accepts. */
  readonly maxUploadMb: number;
}

export interface RunningSheetsWorker {
  /** Stops claiming jobs and waits for the one under way. */
  stop(): Promise<void>;
}

export type StartEmbeddedSheetsWorker = (deps: EmbeddedSheetsWorkerDeps) => RunningSheetsWorker;
