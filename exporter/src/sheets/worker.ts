/**
 * The sheets worker: claims one pending sheet at a time, ingests it, and records the outcome.
 * Usable as its own process (`main.ts`) or inside the API process (embedded mode, with PGlite).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';
import type { Logger } from '@uda/shared/logger';
import type { ObjectStore } from '@uda/shared/object-store';
import { SheetIngestError } from './errors.ts';
import { ingestSheet, type IngestLimits } from './ingest.ts';
import { deleteOlderVersions, downloadUpload, parquetKey } from './objects.ts';
import { claimJob, completeJob, failJob, type ClaimedJob } from './queue.ts';

export interface SheetsWorkerSettings {
  readonly pollMs: number;
  readonly leaseSeconds: number;
  readonly maxAttempts: number;
  readonly limits: IngestLimits;
}

export interface SheetsWorkerDeps {
  readonly db: Knex;
  readonly store: ObjectStore;
  readonly logger: Logger;
  readonly settings: SheetsWorkerSettings;
  /** Parent of each job's scratch folder; defaults to the OS temp folder. */
  readonly workDir?: string;
}

export interface SheetsWorker {
  /** Finishes the current job, if any, then stops polling. */
  stop(): Promise<void>;
}

export function startSheetsWorker(deps: SheetsWorkerDeps): SheetsWorker {
  const controller = new AbortController();
  const running = pollLoop(deps, controller.signal);
  return {
    async stop() {
      controller.abort();
      await running;
    },
  };
}

async function pollLoop(deps: SheetsWorkerDeps, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    const worked = await runOnce(deps).catch((error: unknown) => {
      // Our side failed (database, object store, disk): the lease expires and the job is retried.
      deps.logger.error({ err: error }, 'sheet ingestion attempt failed; retried when its lease expires');
      return false;
    });
    if (!worked) await sleep(deps.settings.pollMs, undefined, { signal }).catch(() => undefined);
  }
}

/** Claims and processes at most one job; true when there was one. */
export async function runOnce(deps: SheetsWorkerDeps): Promise<boolean> {
  const { leaseSeconds, maxAttempts } = deps.settings;
  const claim = await claimJob(deps.db, { leaseSeconds, maxAttempts });
  if (claim.kind === 'none') return false;
  if (claim.kind === 'gave-up') {
    deps.logger.warn({ dataset: claim.id, maxAttempts }, 'sheet failed: attempts exhausted');
    return true;
  }
  await processJob(deps, claim.job);
  return true;
}

/** Ingests one claimed job and records its outcome; a non-user error propagates (lease retry). */
export async function processJob(deps: SheetsWorkerDeps, job: ClaimedJob): Promise<void> {
  const log = deps.logger.child({ dataset: job.id, version: job.version, attempt: job.attempts });
  const dir = await mkdtemp(join(deps.workDir ?? tmpdir(), 'uda-sheet-'));
  try {
    await ingestAndPublish(deps, job, dir, log);
  } catch (error) {
    if (!(error instanceof SheetIngestError)) throw error;
    const recorded = await failJob(deps.db, job, error.message);
    log.info({ reason: error.message, recorded }, 'sheet failed');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function ingestAndPublish(deps: SheetsWorkerDeps, job: ClaimedJob, dir: string, log: Logger): Promise<void> {
  const { limits } = deps.settings;
  const inputPath = join(dir, `upload.${job.format}`);
  const outputPath = join(dir, 'sheet.parquet');
  await downloadUpload(deps.store, job.uploadKey, inputPath, limits.maxBytes);
  const result = await ingestSheet({ inputPath, format: job.format, outputPath, tempDir: join(dir, 'duckdb-tmp'), limits });
  const key = parquetKey(job.accountId, job.id, job.version);
  await deps.store.putFile(key, outputPath, { contentType: 'application/vnd.apache.parquet' });
  if (!(await completeJob(deps.db, job, { ...result, parquetKey: key }))) {
    // Re-uploaded (or deleted) meanwhile: this result is stale and must never be served.
    await deps.store.delete([key]);
    log.info('sheet result discarded: a newer upload replaced it');
    return;
  }
  const removed = await deleteOlderVersions(deps.store, job.accountId, job.id, job.version);
  log.info({ rows: result.rowCount, columns: result.columns.length, removed: removed.length }, 'sheet ready');
}
