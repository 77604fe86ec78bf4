/**
 * `npm run bench:export`: build time and rows per second of a full export run, for the sample data
 * and for a synthetic set of ≥ 5 million rows generated at run time (never committed), each in its
 * own child process so that its peak memory (max RSS, DuckDB included) is its own.
 *
 *   npm run bench:export                 # both
 *   SYNTHETIC_ROWS=10000000 npm run bench:export
 */
import { spawnSync } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@uda/shared/logger';
import { LocalFolderStore } from '@uda/shared/object-store';
import { runExport } from '../src/job.ts';

const DATA = join(import.meta.dirname, '..', 'data');
const SYNTHETIC_ROWS = Number(process.env.SYNTHETIC_ROWS ?? 5_000_000);

interface Figures {
  label: string;
  rows: number;
  seconds: number;
  rowsPerSecond: number;
  peakRssMb: number;
  files: number;
  bytes: number;
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
      duckdb: { memoryLimit: '2GB', threads: 2 },
      logger: createLogger({ name: 'bench', level: 'silent' }),
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
    };
    process.stdout.write(`${JSON.stringify(figures)}\n`);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** The sample data plus a FoodData Central `food_nutrient.csv` of `rows` rows, in its official quoting. */
async function syntheticInput(rows: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'uda-bench-in-'));
  await cp(DATA, dir, { recursive: true });
  const out = createWriteStream(join(dir, 'food/food_nutrient.csv'));
  out.write('"id","fdc_id","nutrient_id","amount","data_points","derivation_id","min","max","median","footnote","min_year_acquired"\n');
  const nutrients = [1003, 1004, 1005, 1008, 1051, 1079, 1087, 1089, 1090, 1091, 1092, 1093, 1095];
  let chunk = '';
  for (let i = 0; i < rows; i++) {
    const fdc = 9_000_000 + Math.floor(i / nutrients.length);
    const amount = ((i * 7919) % 100_000) / 100;
    chunk += `"${100_000_000 + i}","${fdc}","${nutrients[i % nutrients.length]}","${amount}","","","","","","",""\n`;
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'finish');
  await writeFile(join(dir, 'SYNTHETIC'), `${rows} food_nutrient rows\n`);
  return dir;
}

function runChild(label: string, inputDir: string): Figures {
  const child = spawnSync(process.execPath, [import.meta.filename, '--child', label, inputDir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (child.status !== 0) throw new Error(`${label} run failed with exit code ${child.status}`);
  return JSON.parse(child.stdout.trim().split('\n').pop()!) as Figures;
}

async function main(): Promise<void> {
  const [flag, label, inputDir] = process.argv.slice(2);
  if (flag === '--child') return measure(label!, inputDir!);

  const results = [runChild('sample data', DATA)];
  const synthetic = await syntheticInput(SYNTHETIC_ROWS);
  try {
    results.push(runChild(`synthetic (${SYNTHETIC_ROWS.toLocaleString('en-US')} extra food_nutrient rows)`, synthetic));
  } finally {
    await rm(synthetic, { recursive: true, force: true });
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
  console.log(`node ${process.version}, reproduce with: npm run bench:export   (SYNTHETIC_ROWS=${SYNTHETIC_ROWS})`);
}

await main();
