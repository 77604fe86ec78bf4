/**
 * `npm run bench:export`: build time and rows per second of a full export run, for the sample data
 * and for generated full-size inputs at each scale (`generate-data.ts`, written at run time, never
 * committed), each in its own child process so that its peak memory (max RSS, DuckDB included) is
 * its own. At each scale a second run exports the CSV sources alone (Gutenberg, Census, FoodData
 * Central), end to end (load, files, zips, hashes, publish): the rows/s goal is theirs.
 *
 *   npm run bench:export                          # the samples, scale 0.01 and 0.1
 *   npm run bench:export -- --scales 0.01,0.1,1
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@uda/shared/logger';
import { sourceOfTable } from '@uda/shared/catalog';
import { LocalFolderStore } from '@uda/shared/object-store';
import { loadExporterConfig } from '../src/config.ts';
import { runExport } from '../src/job.ts';
import { allTableSpecs } from '../src/sources.ts';
import { generateInputs } from './generate-data.ts';

const DATA = join(import.meta.dirname, '..', 'data');
const SEED = 17;
const { EXPORT_DUCKDB_MEMORY_LIMIT, EXPORT_DUCKDB_THREADS } = loadExporterConfig(process.env);
const DUCKDB = { memoryLimit: EXPORT_DUCKDB_MEMORY_LIMIT, threads: EXPORT_DUCKDB_THREADS };
/** The sources whose dumps are CSV files DuckDB reads itself. */
const CSV_SOURCES = new Set(['gutenberg', 'census', 'food']);

/** One `table built` line of the export's log: the profile of where the time goes. */
interface TableFigures {
  table: string;
  rows: number;
  loadSeconds: number;
  filesSeconds: number;
  peakRssMb: number;
}

/** One `stage built` line: a stage after the tables (search index, checkpoint, hashes, zips, publish). */
interface StageFigures {
  stage: string;
  seconds: number;
  peakRssMb: number;
}

interface Figures {
  label: string;
  rows: number;
  seconds: number;
  rowsPerSecond: number;
  peakRssMb: number;
  /** User and system CPU of the run, DuckDB's threads included: a figure a loaded machine barely moves. */
  cpuSeconds: number;
  files: number;
  bytes: number;
  tables: TableFigures[];
  stages: StageFigures[];
}

/** Child: one export run over `inputDir`, printing its figures as JSON. */
async function measure(label: string, inputDir: string, csvOnly: boolean): Promise<void> {
  const scratch = await mkdtemp(join(tmpdir(), 'uda-bench-out-'));
  try {
    const started = performance.now();
    const result = await runExport({
      inputDir,
      workDir: join(scratch, 'work'),
      store: new LocalFolderStore(join(scratch, 'objects')),
      keepVersions: 3,
      tables: csvOnly ? (await allTableSpecs(inputDir)).filter((t) => CSV_SOURCES.has(sourceOfTable(t.name)?.id ?? '')) : undefined,
      // The exporter's settings (EXPORT_DUCKDB_MEMORY_LIMIT, EXPORT_DUCKDB_THREADS; their defaults unless set): peak RSS is judged against them.
      duckdb: DUCKDB,
      // `table built` lines go to stdout before the figures; the parent reads them as the profile.
      logger: createLogger({ name: 'bench', level: 'info' }),
    });
    const seconds = (performance.now() - started) / 1000;
    const figures: Figures = {
      label,
      rows: result.rows,
      seconds: Number(seconds.toFixed(2)),
      rowsPerSecond: Math.round(result.rows / seconds),
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
      cpuSeconds: Number(((process.resourceUsage().userCPUTime + process.resourceUsage().systemCPUTime) / 1e6).toFixed(1)),
      files: result.manifest.files.length,
      bytes: result.manifest.files.reduce((sum, f) => sum + f.size, 0),
      tables: [],
      stages: [],
    };
    process.stdout.write(`${JSON.stringify(figures)}\n`);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

function runChild(label: string, inputDir: string, csvOnly = false): Figures {
  const args = [import.meta.filename, '--child', label, inputDir, ...(csvOnly ? ['--csv-only'] : [])];
  const child = spawnSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 });
  if (child.status !== 0) throw new Error(`${label} run failed with exit code ${child.status}`);
  const lines = child.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  const figures = lines.pop() as unknown as Figures;
  const tables = (lines.filter((line) => line.msg === 'table built') as unknown as TableFigures[])
    .map(({ table, rows, loadSeconds, filesSeconds, peakRssMb }) => ({ table, rows, loadSeconds, filesSeconds, peakRssMb }));
  const stages = (lines.filter((line) => line.msg === 'stage built') as unknown as StageFigures[])
    .map(({ stage, seconds, peakRssMb }) => ({ stage, seconds, peakRssMb }));
  return { ...figures, tables, stages };
}

async function main(): Promise<void> {
  const [flag, label, inputDir] = process.argv.slice(2);
  if (flag === '--child') return measure(label!, inputDir!, process.argv.includes('--csv-only'));

  const scalesArg = process.argv.indexOf('--scales');
  const scales = (scalesArg > 0 ? process.argv[scalesArg + 1]! : '0.01,0.1').split(',').map(Number);
  const results = [runChild('sample data', DATA)];
  for (const scale of scales) {
    const input = await mkdtemp(join(tmpdir(), `uda-bench-in-${scale}-`));
    try {
      await generateInputs(input, scale, SEED);
      results.push(runChild(`scale ${scale}`, input));
      results.push(runChild(`scale ${scale}, CSV sources`, input, true));
    } finally {
      await rm(input, { recursive: true, force: true });
    }
  }
  console.log('\nExport build benchmark (ingest → service.db → Parquet/CSV/zips → local object store)');
  console.table(results.map((r) => ({
    run: r.label,
    rows: r.rows,
    'seconds': r.seconds,
    'rows/s': r.rowsPerSecond,
    'peak RSS (MB)': r.peakRssMb,
    'CPU (s)': r.cpuSeconds,
    'rows per CPU s': Math.round(r.rows / r.cpuSeconds),
    'output (MB)': Number((r.bytes / 1e6).toFixed(1)),
  })));
  for (const r of results) {
    // The profile: each table's ingest (into service.db) and its Parquet and CSV files, then each later stage.
    const loading = r.tables.reduce((sum, t) => sum + t.loadSeconds + t.filesSeconds, 0);
    const staged = r.stages.reduce((sum, s) => sum + s.seconds, 0);
    console.log(`\nProfile, ${r.label}: every table's load and files ${loading.toFixed(2)} s, later stages ${staged.toFixed(2)} s, ` +
      `unaccounted ${(r.seconds - loading - staged).toFixed(2)} s; tables of 10,000 rows or more, then the stages:`);
    console.table([
      ...r.tables.filter((t) => t.rows >= 10_000).map((t) => ({
        'table or stage': t.table,
        rows: t.rows,
        'load (s)': t.loadSeconds,
        'load rows/s': Math.round(t.rows / Math.max(t.loadSeconds, 0.01)),
        'files (s)': t.filesSeconds,
        'peak RSS (MB)': t.peakRssMb,
      })),
      ...r.stages.map((s) => ({ 'table or stage': s.stage, 'seconds': s.seconds, 'peak RSS (MB)': s.peakRssMb })),
    ]);
  }
  for (const r of results.filter((r) => r.label.endsWith('CSV sources'))) {
    console.log(`${r.label}: CSV sources end to end ${r.rowsPerSecond.toLocaleString('en-US')} rows/s (${r.rows.toLocaleString('en-US')} rows in ${r.seconds} s, ` +
      `${Math.round(r.rows / r.cpuSeconds).toLocaleString('en-US')} rows per CPU second, peak RSS ${r.peakRssMb} MB)`);
  }
  console.log(`DuckDB memory_limit ${DUCKDB.memoryLimit}, threads ${DUCKDB.threads}; node ${process.version}, seed ${SEED}; reproduce with: npm run bench:export -- --scales ${scales.join(',')}`);
}

await main();
