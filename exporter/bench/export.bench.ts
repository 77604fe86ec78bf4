/**
 * `npm run bench:export`: where a full export run's time and memory go, per table and per stage, for
 * the sample data and for generated full-size inputs at each scale (`generate-data.ts`, written at
 * run time, never committed) or an input folder given with `--input`. Each run is a child process,
 * so its peak memory (max RSS, DuckDB included) is its own. At each input:
 * - the whole export (load, keys, search index, files, zips, hashes, publish to a local folder store);
 * - the CSV sources alone (Gutenberg, Census, FoodData Central), end to end: the rows/s goal is theirs;
 * - the FLOOR (`floor.ts`): DuckDB reading each table's input and writing its Parquet file, nothing
 *   else; the whole export's time over the floor's is the overhead of everything the export adds;
 * - the whole export again under a lowered DuckDB memory limit (`--low-memory`), for its peak RSS.
 * `--runs whole,csv,floor,low-memory` picks some of them. A failed run is reported with its profile
 * up to the failure.
 *
 *   npm run bench:export                                   # the samples, scale 0.01 and 0.1
 *   npm run bench:export -- --scales 0.1
 *   npm run bench:export -- --scales none --input <folder of generated inputs> --low-memory 600MB   (inputs: npm run data:generate -- --scale 1 --out <folder>)
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
import { runFloor } from './floor.ts';
import { generateInputs } from './generate-data.ts';
import { printRun, type Figures, type Kind } from './report.ts';

const DATA = join(import.meta.dirname, '..', 'data');
const SEED = 17;
const { EXPORT_DUCKDB_MEMORY_LIMIT, EXPORT_DUCKDB_THREADS } = loadExporterConfig(process.env);
/** The sources whose dumps are CSV files DuckDB reads itself. */
const CSV_SOURCES = new Set(['gutenberg', 'census', 'food']);

const cpuSeconds = () => Number(((process.resourceUsage().userCPUTime + process.resourceUsage().systemCPUTime) / 1e6).toFixed(1));
const peakRssMb = () => Math.round(process.resourceUsage().maxRSS / 1024);

/** Child: one run over `inputDir`, its log lines (the profile) and then its figures as JSON on stdout. */
async function measure(label: string, inputDir: string, kind: Kind, memoryLimit: string): Promise<void> {
  const scratch = await mkdtemp(join(tmpdir(), 'uda-bench-out-'));
  const duckdb = { memoryLimit, threads: EXPORT_DUCKDB_THREADS };
  // `table built` and `stage built` lines go to stdout before the figures; the parent reads them as the profile.
  const logger = createLogger({ name: 'bench', level: 'info' });
  try {
    const started = performance.now();
    let rows: number;
    let files = 0;
    let bytes = 0;
    if (kind === 'floor') {
      rows = await runFloor(inputDir, join(scratch, 'floor'), duckdb, logger);
    } else {
      const all = await allTableSpecs(inputDir);
      const result = await runExport({
        inputDir,
        workDir: join(scratch, 'work'),
        store: new LocalFolderStore(join(scratch, 'objects')),
        keepVersions: 3,
        tables: kind === 'csv' ? all.filter((t) => CSV_SOURCES.has(sourceOfTable(t.name)?.id ?? '')) : all,
        duckdb,
        logger,
      });
      ({ rows } = result);
      files = result.manifest.files.length;
      bytes = result.manifest.files.reduce((sum, f) => sum + f.size, 0);
    }
    const seconds = (performance.now() - started) / 1000;
    const figures = { label, kind, memoryLimit, rows, seconds: Number(seconds.toFixed(2)), peakRssMb: peakRssMb(), cpuSeconds: cpuSeconds(), files, bytes };
    process.stdout.write(`${JSON.stringify(figures)}\n`);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

function runChild(group: string, label: string, inputDir: string, kind: Kind, memoryLimit = EXPORT_DUCKDB_MEMORY_LIMIT): Figures {
  const args = [import.meta.filename, '--child', label, inputDir, kind, memoryLimit];
  // As the exporter's image sets it (exporter/Dockerfile): the overlapped stages need more than libuv's default 4 threads.
  const env = { ...process.env, UV_THREADPOOL_SIZE: '8' };
  const child = spawnSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20, env });
  const lines = child.stdout.trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
  // A failed run (out of memory under a lowered limit) still shows its profile up to the failure.
  if (child.status !== 0) return { label, group, kind, memoryLimit, rows: 0, seconds: 0, peakRssMb: 0, cpuSeconds: 0, files: 0, bytes: 0, failed: `exit code ${child.status}`, log: lines };
  const figures = lines.pop() as Omit<Figures, 'log' | 'group'>;
  return { ...figures, group, log: lines };
}

function option(name: string, otherwise: string): string {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1]! : otherwise;
}

const RUNS = ['whole', 'csv', 'floor', 'low-memory'] as const;

/** The runs at one input folder (`--runs`, default all four). */
function runsAt(label: string, inputDir: string, lowMemory: string, runs: readonly string[]): Figures[] {
  const all = {
    whole: () => runChild(label, label, inputDir, 'whole'),
    csv: () => runChild(label, `${label}, CSV sources`, inputDir, 'csv'),
    floor: () => runChild(label, `${label}, FLOOR`, inputDir, 'floor'),
    'low-memory': () => runChild(label, `${label}, memory_limit ${lowMemory}`, inputDir, 'whole', lowMemory),
  };
  return RUNS.filter((run) => runs.includes(run)).map((run) => all[run]());
}

async function main(): Promise<void> {
  const [flag, label, inputDir, kind, memoryLimit] = process.argv.slice(2);
  if (flag === '--child') return measure(label!, inputDir!, kind as Kind, memoryLimit!);

  const scalesArg = option('--scales', '0.01,0.1');
  const scales = scalesArg === 'none' ? [] : scalesArg.split(',').map(Number);
  const input = option('--input', '');
  const lowMemory = option('--low-memory', '600MB');
  const runs = option('--runs', RUNS.join(',')).split(',');
  const results = [runChild('sample data', 'sample data', DATA, 'whole')];
  for (const scale of scales) {
    const generated = await mkdtemp(join(tmpdir(), `uda-bench-in-${scale}-`));
    try {
      await generateInputs(generated, scale, SEED);
      results.push(...runsAt(`scale ${scale}`, generated, lowMemory, runs));
    } finally {
      await rm(generated, { recursive: true, force: true });
    }
  }
  if (input) results.push(...runsAt(input, input, lowMemory, runs));

  console.log('\nExport build benchmark (ingest → service.db → Parquet/CSV/zips → local object store); the machine may be shared, so CPU seconds are given beside wall seconds');
  for (const r of results) printRun(r, results);
  const command = ['npm run bench:export --', `--scales ${scales.length ? scales.join(',') : 'none'}`, input ? `--input ${input}` : '', `--runs ${runs.join(',')}`, `--low-memory ${lowMemory}`].filter(Boolean).join(' ');
  console.log(`\nDuckDB memory_limit ${EXPORT_DUCKDB_MEMORY_LIMIT} (lowered run: ${lowMemory}), threads ${EXPORT_DUCKDB_THREADS}; node ${process.version}, seed ${SEED}; reproduce with: ${command}`);
}

await main();
