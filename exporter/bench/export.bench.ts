/**
 * `npm run bench:export`: build time and rows per second of a full export run, for the sample data
 * and for generated full-size inputs at each scale (`generate-data.ts`, written at run time, never
 * committed), each in its own child process so that its peak memory (max RSS, DuckDB included) is
 * its own.
 *
 *   npm run bench:export                          # the samples, scale 0.01 and 0.1
 *   npm run bench:export -- --scales 0.01,0.1,1
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@uda/shared/logger';
import { LocalFolderStore } from '@uda/shared/object-store';
import { runExport } from '../src/job.ts';
import { generateInputs } from './generate-data.ts';

const DATA = join(import.meta.dirname, '..', 'data');
const SEED = 17;

/** One `table built` line of the export's log: the profile of where the time goes. */
interface TableFigures {
  table: string;
  rows: number;
  loadSeconds: number;
  filesSeconds: number;
}

interface Figures {
  label: string;
  rows: number;
  seconds: number;
  rowsPerSecond: number;
  peakRssMb: number;
  files: number;
  bytes: number;
  tables: TableFigures[];
  searchIndexSeconds?: number;
}

/** Child: one export run over `inputDir`, printing its figures as JSON. */
async function measure(label: string, inputDir: string): Promise<void> {
  const scratch = await mkdtemp(join(tmpdir(), 'uda-bench-out-'));
  try {
    const started = performance.now();
    const result = await runExport({
      inputDir,
      workDir: join(scratch, 'work'),
      store: new LocalFolderStore(join(scratch, 'objects')),
      keepVersions: 3,
      // The exporter's defaults (EXPORT_DUCKDB_MEMORY_LIMIT, EXPORT_DUCKDB_THREADS): peak RSS is judged against them.
      duckdb: { memoryLimit: '1GB', threads: 2 },
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
      files: result.manifest.files.length,
      bytes: result.manifest.files.reduce((sum, f) => sum + f.size, 0),
      tables: [],
    };
    process.stdout.write(`${JSON.stringify(figures)}\n`);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

function runChild(label: string, inputDir: string): Figures {
  const child = spawnSync(process.execPath, [import.meta.filename, '--child', label, inputDir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (child.status !== 0) throw new Error(`${label} run failed with exit code ${child.status}`);
  const lines = child.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  const figures = lines.pop() as unknown as Figures;
  const built = lines.filter((line) => line.msg === 'table built') as unknown as TableFigures[];
  const searchIndex = lines.find((line) => line.msg === 'search index built');
  const tables = built.map(({ table, rows, loadSeconds, filesSeconds }) => ({ table, rows, loadSeconds, filesSeconds }));
  return { ...figures, tables, searchIndexSeconds: searchIndex?.seconds as number | undefined };
}

async function main(): Promise<void> {
  const [flag, label, inputDir] = process.argv.slice(2);
  if (flag === '--child') return measure(label!, inputDir!);

  const scalesArg = process.argv.indexOf('--scales');
  const scales = (scalesArg > 0 ? process.argv[scalesArg + 1]! : '0.01,0.1').split(',').map(Number);
  const results = [runChild('sample data', DATA)];
  for (const scale of scales) {
    const input = await mkdtemp(join(tmpdir(), `uda-bench-in-${scale}-`));
    try {
      await generateInputs(input, scale, SEED);
      results.push(runChild(`scale ${scale}`, input));
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
    'output (MB)': Number((r.bytes / 1e6).toFixed(1)),
  })));
  for (const r of results) {
    // The profile: each large table's ingest (into service.db) and its Parquet and CSV files.
    const loading = r.tables.reduce((sum, t) => sum + t.loadSeconds + t.filesSeconds, 0);
    console.log(`\nProfile, ${r.label}: every table's load and files ${loading.toFixed(2)} s, search index ${r.searchIndexSeconds ?? '?'} s, ` +
      `the rest (zips, hashes, publish) ${(r.seconds - loading - (r.searchIndexSeconds ?? 0)).toFixed(2)} s; tables of 10,000 rows or more:`);
    console.table(r.tables.filter((t) => t.rows >= 10_000).map((t) => ({
      table: t.table,
      rows: t.rows,
      'load (s)': t.loadSeconds,
      'load rows/s': Math.round(t.rows / Math.max(t.loadSeconds, 0.01)),
      'files (s)': t.filesSeconds,
    })));
  }
  console.log(`node ${process.version}, seed ${SEED}; reproduce with: npm run bench:export -- --scales ${scales.join(',')}`);
}

await main();
