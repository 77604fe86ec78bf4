/**
 * One export run: ingest every source into `service.db`, write the per-table and bulk files,
 * publish them, switch the manifest, prune old versions. Any failure before the switch leaves the
 * previous export served, and the run fails with the reason.
 *
 * The stages overlap: while DuckDB loads a table on one connection, a second connection writes the
 * previous table's Parquet and CSV files and builds each source's search index once its tables are
 * in; each finished file is appended to its bulk zip (deflated on libuv's threads, hashed as it is
 * read) and uploaded under the version's prefix, which nothing reads until the manifest names it.
 * Each source's runner files (its lookup arrays and page file) are built right after its index.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { sourceOfTable } from '@uda/shared/catalog';
import { newVersion, type ExportFile, type Manifest, type RunnerFile } from '@uda/shared/manifest';
import type { ObjectStore } from '@uda/shared/object-store';
import type { Logger } from '@uda/shared/logger';
import { loadTable, openBuildDatabase, type DuckDbLimits } from './build/database.ts';
import { describeDatabase, openZip, writeTableFiles, type BulkZip, type TableFile } from './build/files.ts';
import { sampleRss } from './build/peak-rss.ts';
import { logSink, terminalSink, withProgress, type ProgressSink } from './build/progress.ts';
import { openRunnerFiles, type RunnerFilesWriter } from './build/runner-files.ts';
import { buildSearchIndex, SEARCH_SPECS } from '@uda/search/index';
import { allTableSpecs } from './sources.ts';
import { pruneVersions, removeVersion, switchManifest, versionUploads, type LocalFile, type VersionUploads } from './publish.ts';
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
  /** Called with each object's key once it is stored under the version's prefix. */
  readonly onUploaded?: (key: string) => void;
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
  await removeLeftoverBuilds(options.workDir);
  await mkdir(buildDir, { recursive: true });
  const log = options.logger.child({ version });
  const uploads = versionUploads(options.store, version, options.onUploaded);
  try {
    let manifest: Manifest;
    try {
      const tables = options.tables ?? (await allTableSpecs(options.inputDir, options.liveCopies));
      const { files, counts, runnerFiles } = await buildFiles(tables, buildDir, options.duckdb, log, uploads);
      manifest = await stage(log, 'manifest switch', () => switchManifest(options.store, { version, builtAt, tables: counts, files, runnerFiles }));
    } catch (error) {
      // Best effort: leave no half-written version behind (the next run's prune removes a leftover).
      await uploads.stop();
      await removeVersion(options.store, version).catch(() => {});
      throw error;
    }
    log.info({ files: manifest.files.length }, 'manifest switched');
    const removedVersions = await stage(log, 'prune', () => pruneVersions(options.store, version, options.keepVersions));
    const rows = Object.values(manifest.tables).reduce((sum, t) => sum + t.rows, 0);
    return { manifest, removedVersions, rows };
  } finally {
    await rm(buildDir, { recursive: true, force: true });
  }
}

/**
 * Removes the build folders of runs killed outright (SIGKILL, an OOM kill: no `finally` ran), which
 * would otherwise fill the disk over the nights. Only one export runs at a time (the CronJob forbids
 * overlapping runs), so any build folder found at the start is such a leftover.
 */
async function removeLeftoverBuilds(workDir: string): Promise<void> {
  const names = await readdir(workDir).catch(() => []);
  await Promise.all(names.filter((name) => name.startsWith('build-')).map((name) => rm(join(workDir, name), { recursive: true, force: true })));
}

const seconds = (ms: number) => Number((ms / 1000).toFixed(2));
const rate = (rows: number, s: number) => Math.round(rows / Math.max(s, 0.01));

/**
 * Runs one stage of the build and logs its time and peak RSS (`stage built`): the export's profile
 * beside `table built`. Stages overlap, so a stage's peak RSS is the process's while it ran.
 */
async function stage<T>(log: Logger, name: string, run: () => Promise<T>, fields: Record<string, number> = {}): Promise<T> {
  const started = performance.now();
  const rss = sampleRss();
  try {
    return await run();
  } finally {
    log.info({ stage: name, seconds: seconds(performance.now() - started), peakRssMb: rss.stop(), ...fields }, 'stage built');
  }
}

/**
 * Work that runs one task at a time beside the loads, in the order queued. After a failure no
 * further task starts, and `check` rethrows it so the load loop stops early.
 */
function serialQueue() {
  let tail: Promise<unknown> = Promise.resolve();
  let failure: { error: unknown } | undefined;
  const check = () => {
    if (failure) throw failure.error;
  };
  return {
    run<T>(task: () => Promise<T>): Promise<T> {
      const result = tail.then(() => (check(), task()));
      tail = result.catch((error: unknown) => (failure ??= { error }));
      return result;
    },
    check,
    /** Resolves when no task runs, rejecting with the first failure. */
    async drained() {
      await tail;
      check();
    },
  };
}

/**
 * The two kinds of work that each take most of the export's memory take turns: a table's load
 * (DuckDB's memory limit) and a source's runner files (its arrays, stemmed titles and page rows in
 * JavaScript). A runner-files stage waits for the running load to finish, the next load for it.
 */
function memoryTurns() {
  let last: Promise<unknown> = Promise.resolve();
  return {
    take<T>(work: () => Promise<T>): Promise<T> {
      const turn = last.then(work);
      last = turn.catch(() => {});
      return turn;
    },
  };
}

/** The built files so far: every file's upload and hash, and the bulk zips that the table files go into. */
interface Outputs {
  readonly uploads: VersionUploads;
  readonly zips: { readonly parquet: BulkZip; readonly csv: BulkZip };
  readonly tableFiles: Promise<ExportFile>[];
}

/** Hashes the table file through its zip and uploads it meanwhile; the manifest entry once both are done. */
function publishTableFile(file: TableFile, outputs: Outputs): void {
  const zip = file.format === 'parquet' ? outputs.zips.parquet : outputs.zips.csv;
  const entry = Promise.all([zip.add(file), outputs.uploads.upload(file)]).then(([sha256, uploaded]) => {
    const { path: _path, ...described } = file;
    return { ...described, sha256, ...uploaded };
  });
  // Awaited after the last table; a failure meanwhile must not be an unhandled rejection.
  entry.catch(() => {});
  outputs.tableFiles.push(entry);
}

async function uploadBuilt<T extends LocalFile>(file: T, uploads: VersionUploads): Promise<Omit<T, 'path'> & { key: string; etag: string }> {
  const { path: _path, ...described } = file;
  return { ...described, ...(await uploads.upload(file)) };
}

async function buildFiles(tables: readonly TableSpec[], buildDir: string, limits: DuckDbLimits, log: Logger, uploads: VersionUploads) {
  const dbPath = join(buildDir, 'service.db');
  const database = await openBuildDatabase(dbPath, limits);
  const background = await database.connect();
  const queue = serialQueue();
  // A load fills DuckDB's memory and a source's runner files JavaScript's: one at a time, so both fit one budget.
  const turns = memoryTurns();
  const zipsStarted = performance.now();
  const outputs: Outputs = {
    uploads,
    zips: { parquet: openZip(join(buildDir, 'service.parquet.zip'), 'service.parquet.zip'), csv: openZip(join(buildDir, 'service.csv.zip'), 'service.csv.zip') },
    tableFiles: [],
  };
  const runner: RunnerFilesWriter = await openRunnerFiles(buildDir);
  const counts: Manifest['tables'] = {};
  // A person watching a terminal sees each table's rows, rate and ETA; a log gets plain lines.
  const progress = process.stderr.isTTY ? terminalSink(process.stderr) : logSink(log);
  try {
    const loaded = new Set<string>();
    for (const table of loadOrder(tables)) {
      uploads.check();
      if (table.keepFirst) await queue.drained();
      queue.check();
      const rows = await turns.take(() => loadOne(database.connection, table, buildDir, progress, log));
      counts[table.name] = { source: sourceOfTable(table.name)!.id, rows };
      loaded.add(table.name);
      void queue.run(async () => (await tableFiles(background, table.name, rows, buildDir, log)).forEach((f) => publishTableFile(f, outputs))).catch(() => {});
      // Only in service.db (the lookups read it); the per-table files and zips are the catalog's tables.
      for (const spec of SEARCH_SPECS.filter((s) => s.tables.includes(table.name) && s.tables.every((t) => loaded.has(t)))) {
        // The index build returns the runner's arrays' makings: the runner files never read the index tables.
        void queue.run(async () => {
          const built = await stage(log, `search index ${spec.source}`, () => buildSearchIndex(background, spec, { scratchDir: buildDir }));
          await turns.take(() => stage(log, `runner files ${spec.source}`, () => runner.addSource(background, spec.source, built)));
        }).catch(() => {});
      }
    }
    await stage(log, 'files and indexes after the last load', () => queue.drained());
  } catch (error) {
    outputs.zips.parquet.abort();
    outputs.zips.csv.abort();
    await runner.abort();
    throw error;
  } finally {
    // The background connection may still run a task after a failure: it is closed once idle.
    await queue.drained().catch(() => {});
    background.closeSync();
    await stage(log, 'checkpoint', () => database.close());
  }
  // Independent reads of finished files: together they keep both cores busy (deflate runs on libuv's threads).
  const zipped = (zip: BulkZip) => zip.finish().then((built) => (log.info({ stage: built.name, seconds: seconds(performance.now() - zipsStarted), sizeMb: Math.round(built.size / 1e6) }, 'zip built'), uploadBuilt(built, uploads)));
  const runnerFiles: Promise<RunnerFile[]> = runner.finish().then((built) => Promise.all(built.map((file) => uploadBuilt(file, uploads))));
  runnerFiles.catch(() => {});
  const bulk = await stage(log, 'zips, service.db hash and uploads after checkpoint', () => Promise.all([
    describeDatabase(dbPath).then((built) => uploadBuilt(built, uploads)),
    zipped(outputs.zips.parquet),
    zipped(outputs.zips.csv),
    Promise.all(outputs.tableFiles),
    runnerFiles,
  ]));
  const [database_, parquetZip, csvZip, tableEntries, runnerEntries] = bulk;
  return { files: [database_, parquetZip, csvZip, ...tableEntries], counts, runnerFiles: runnerEntries };
}

/**
 * A table that drops repeated keys deletes rows before building its key; DuckDB keeps deleted rows
 * in view of any older transaction still running, and the key build then sees them as duplicates.
 * So such a table loads with the other connection idle, and first, when it has nothing to do yet.
 */
function loadOrder(tables: readonly TableSpec[]): TableSpec[] {
  return [...tables.filter((t) => t.keepFirst), ...tables.filter((t) => !t.keepFirst)];
}

/** Loads one table into `service.db`, logging its time, rate and peak RSS (`table built`). */
async function loadOne(connection: DuckDBConnection, table: TableSpec, buildDir: string, progress: ProgressSink, log: Logger): Promise<number> {
  if (!sourceOfTable(table.name)) throw new Error(`table ${table.name} is not in the source catalog`);
  const started = performance.now();
  const rss = sampleRss();
  const estimated = await table.sql?.estimatedRows();
  const rows = await withProgress(connection, table.name, estimated, progress, () => loadTable(connection, table, buildDir));
  const loadSeconds = seconds(performance.now() - started);
  progress.done(table.name, rows, loadSeconds);
  log.info({ table: table.name, rows, loadSeconds, rowsPerSecond: rate(rows, loadSeconds), peakRssMb: rss.stop() }, 'table built');
  return rows;
}

/** The table's Parquet and CSV files, logged as `table files built` (time, rate, peak RSS). */
async function tableFiles(connection: DuckDBConnection, table: string, rows: number, buildDir: string, log: Logger): Promise<TableFile[]> {
  const started = performance.now();
  const rss = sampleRss();
  const files = await writeTableFiles(connection, table, sourceOfTable(table)!.id, buildDir);
  const filesSeconds = seconds(performance.now() - started);
  log.info({ table, rows, filesSeconds, rowsPerSecond: rate(rows, filesSeconds), peakRssMb: rss.stop() }, 'table files built');
  return files;
}
