/**
 * One export run: ingest every source into `service.db`, write the per-table and bulk files,
 * publish them, switch the manifest, prune old versions. Any failure before the switch leaves the
 * previous export served, and the run fails with the reason.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { sourceOfTable } from '@uda/shared/catalog';
import { newVersion, type ExportFile, type Manifest } from '@uda/shared/manifest';
import type { ObjectStore } from '@uda/shared/object-store';
import type { Logger } from '@uda/shared/logger';
import { loadTable, openBuildDatabase, type DuckDbLimits } from './build/database.ts';
import { describeDatabase, writeTableFiles, writeZip, type BuiltFile } from './build/files.ts';
import { sampleRss } from './build/peak-rss.ts';
import { logSink, terminalSink, withProgress } from './build/progress.ts';
import { buildSearchIndexes } from './build/search-index.ts';
import { writeRunnerFiles, type BuiltRunnerFile } from './build/runner-files.ts';
import { allTableSpecs } from './sources.ts';
import { publish, pruneVersions } from './publish.ts';
import type { LiveCopyReader } from './ingest/live-copies.ts';
import type { TableSpec } from './ingest/table-spec.ts';

export interface ExportJobOptions {
  readonly inputDir: string;
  readonly workDir: string;
  readonly store: ObjectStore;
  readonly keepVersions: number;
  readonly duckdb: DuckDbLimits;
  readonly logger: Logger;
  /** Defaults to every catalog table from `inputDir`; the benchmark passes its own. */
  readonly tables?: readonly TableSpec[];
  readonly onUploaded?: (file: ExportFile) => void;
  /** The live answers kept by the API, merged into the live sources' tables. */
  readonly liveCopies?: LiveCopyReader;
}

export interface ExportResult {
  readonly manifest: Manifest;
  readonly removedVersions: string[];
  readonly rows: number;
}

export async function runExport(options: ExportJobOptions): Promise<ExportResult> {
  const builtAt = new Date();
  const version = newVersion(builtAt, randomBytes(3).toString('hex'));
  const buildDir = join(options.workDir, `build-${version}`);
  await mkdir(buildDir, { recursive: true });
  const log = options.logger.child({ version });
  try {
    const tables = options.tables ?? (await allTableSpecs(options.inputDir, options.liveCopies));
    const { files, counts, runnerFiles } = await buildFiles(tables, buildDir, options.duckdb, log);
    const manifest = await stage(log, 'publish', () => publish(options.store, { version, builtAt, tables: counts, files, runnerFiles }, options.onUploaded));
    log.info({ files: manifest.files.length }, 'manifest switched');
    const removedVersions = await stage(log, 'prune', () => pruneVersions(options.store, version, options.keepVersions));
    const rows = Object.values(counts).reduce((sum, t) => sum + t.rows, 0);
    return { manifest, removedVersions, rows };
  } finally {
    await rm(buildDir, { recursive: true, force: true });
  }
}

const seconds = (ms: number) => Number((ms / 1000).toFixed(2));

/** Runs one stage of the build and logs its time and peak RSS (`stage built`): the export's profile beside `table built`. */
async function stage<T>(log: Logger, name: string, run: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const rss = sampleRss();
  try {
    return await run();
  } finally {
    log.info({ stage: name, seconds: seconds(performance.now() - started), peakRssMb: rss.stop() }, 'stage built');
  }
}

async function buildFiles(tables: readonly TableSpec[], buildDir: string, limits: DuckDbLimits, log: Logger) {
  const dbPath = join(buildDir, 'service.db');
  const database = await openBuildDatabase(dbPath, limits);
  const counts: Manifest['tables'] = {};
  const hashedTableFiles: Promise<BuiltFile[]>[] = [];
  let runnerFiles: BuiltRunnerFile[];
  // A person watching a terminal sees each table's rows, rate and ETA; a log gets plain lines.
  const progress = process.stderr.isTTY ? terminalSink(process.stderr) : logSink(log);
  try {
    for (const table of tables) {
      const source = sourceOfTable(table.name);
      if (!source) throw new Error(`table ${table.name} is not in the source catalog`);
      const started = performance.now();
      const rss = sampleRss();
      const estimated = await table.sql?.estimatedRows();
      const rows = await withProgress(database.connection, table.name, estimated, progress, () => loadTable(database.connection, table, buildDir));
      const loaded = performance.now();
      progress.done(table.name, rows, (loaded - started) / 1000);
      counts[table.name] = { source: source.id, rows };
      hashedTableFiles.push((await writeTableFiles(database.connection, table.name, source.id, buildDir)).hashed);
      // The two timings are the export's profile: ingest, then the per-table Parquet and CSV files.
      const loadSeconds = seconds(loaded - started);
      log.info({ table: table.name, rows, loadSeconds, rowsPerSecond: Math.round(rows / Math.max(loadSeconds, 0.01)), filesSeconds: seconds(performance.now() - loaded), peakRssMb: rss.stop() }, 'table built');
    }
    // Only in service.db (the lookups read it); the per-table files and zips are the catalog's tables.
    await stage(log, 'search index', () => buildSearchIndexes(database.connection, new Set(tables.map((t) => t.name))));
    runnerFiles = await stage(log, 'runner files', () => writeRunnerFiles(database.connection, buildDir));
  } finally {
    await stage(log, 'checkpoint', () => database.close());
  }
  const tableFiles = (await stage(log, 'table file hashes', () => Promise.all(hashedTableFiles))).flat();
  // Independent reads of finished files: together they keep both cores busy (deflate runs on libuv's threads).
  const bulk = await stage(log, 'zips and service.db hash', () => Promise.all([
    describeDatabase(dbPath),
    writeZip(join(buildDir, 'service.parquet.zip'), 'service.parquet.zip', tableFiles.filter((f) => f.format === 'parquet')),
    writeZip(join(buildDir, 'service.csv.zip'), 'service.csv.zip', tableFiles.filter((f) => f.format === 'csv')),
  ]));
  const files = [...bulk, ...tableFiles];
  return { files, counts, runnerFiles };
}
