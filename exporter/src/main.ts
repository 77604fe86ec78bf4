/**
 * `npm run export`: one export run, as the Kubernetes CronJob runs it. Exits 0 on success, 1 with
 * a one-line reason on failure (the previous export stays served).
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { loadConfigOrExit } from '@uda/shared/config';
import { createLogger } from '@uda/shared/logger';
import { createObjectStore } from '@uda/shared/object-store';
import { loadExporterConfig } from './config.ts';
import { PostgresLiveCopies } from './ingest/live-copies.ts';
import { runExport } from './job.ts';
import { pushOutcome, type RunOutcome } from './metrics.ts';

const config = loadConfigOrExit(() => loadExporterConfig(process.env));
const logger = createLogger({ name: 'exporter', level: config.LOG_LEVEL });
const store = createObjectStore(config);
const workDir = join(config.DATA_DIR, 'exporter');
await mkdir(workDir, { recursive: true });

const liveCopies = config.DATABASE_URL ? new PostgresLiveCopies(config.DATABASE_URL) : undefined;
const started = performance.now();
let outcome: RunOutcome;
try {
  const result = await runExport({
    inputDir: config.EXPORT_INPUT_DIR,
    workDir,
    store,
    keepVersions: config.EXPORT_KEEP_VERSIONS,
    duckdb: { memoryLimit: config.EXPORT_DUCKDB_MEMORY_LIMIT, threads: config.EXPORT_DUCKDB_THREADS },
    logger,
    liveCopies,
  });
  const seconds = (performance.now() - started) / 1000;
  const rows = Object.fromEntries(Object.entries(result.manifest.tables).map(([table, t]) => [table, t.rows]));
  outcome = { ok: true, finishedAt: new Date(), durationSeconds: seconds, rows };
  logger.info(
    { version: result.manifest.version, rows: result.rows, seconds: Number(seconds.toFixed(2)), store: store.description, removed: result.removedVersions },
    'export published',
  );
} catch (error) {
  logger.error({ err: error }, 'export failed; the previous export is still served');
  process.stderr.write(`export failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
  outcome = { ok: false, finishedAt: new Date(), durationSeconds: (performance.now() - started) / 1000 };
}

await liveCopies?.close();

if (config.EXPORT_PUSHGATEWAY_URL) {
  await pushOutcome(config.EXPORT_PUSHGATEWAY_URL, outcome).catch((error: unknown) => {
    // The export itself is done (or failed) either way; a missing metric is what the alert catches.
    logger.warn({ err: error }, 'could not push metrics to the Pushgateway');
  });
}
