/**
 * `npm run bench:runner-start -- <DATA_DIR>`: how long a runner takes to start serving a new export
 * version, from the export an exporter wrote into `<DATA_DIR>/objects` (a local folder store; an
 * `npm run export` with that DATA_DIR and EXPORT_INPUT_DIR at a scale's inputs writes one), in
 * seconds per step: download (service.db and the runner files, copied and checked by sha256),
 * database open, index load, page files, and the RSS after. Two children, each its own process so
 * its RSS is its own: one with the runner files, one as for an older export without them (the
 * runner then builds the index and pages from service.db). Prints both and their ratio.
 *
 * The download here is a local copy: from S3 it takes as long as the bytes take on the network, so
 * the bytes are printed too.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalFolderStore } from '@uda/shared/object-store';
import { databaseEntry, downloadDatabase, readManifest } from '../src/database-download.ts';
import type { OpenDatabase } from '../src/database-manager.ts';
import { openSandbox } from '../src/sandbox.ts';
import { openSearchIndexes } from '../src/lookups/search-index.ts';

type Mode = 'files' | 'database';

interface Figures {
  mode: Mode;
  origin: string;
  downloadedMegabytes: number;
  downloadSeconds: number;
  openSeconds: number;
  /** Index arrays and page files together: the runner's `prepare` step. */
  indexAndPagesSeconds: number;
  totalSeconds: number;
  cpuSeconds: number;
  rssMegabytes: number;
  peakRssMegabytes: number;
}

const since = (started: number) => Number(((performance.now() - started) / 1000).toFixed(3));

/** Child: one runner start over the export in `dataDir`, printing its figures as JSON. */
async function measure(mode: Mode, dataDir: string): Promise<void> {
  const store = new LocalFolderStore(join(dataDir, 'objects'));
  const scratch = await mkdtemp(join(tmpdir(), 'uda-runner-start-'));
  try {
    const manifest = await readManifest(store);
    const entry = manifest && databaseEntry(manifest);
    if (!manifest || !entry) throw new Error(`no export in ${dataDir}/objects`);
    const given = mode === 'files' ? manifest : { ...manifest, runner_files: undefined };
    const started = performance.now();
    const path = await downloadDatabase(store, entry, given, join(scratch, 'db'));
    const downloadSeconds = since(started);
    const opening = performance.now();
    const limits = { memoryLimit: '1GB', threads: 2, maxTempSize: '2GB', tempDirectory: join(scratch, 'tmp') };
    const instance = await openSandbox(path, limits);
    const openSeconds = since(opening);
    const loading = performance.now();
    const database: OpenDatabase = { version: manifest.version, path, instance, leases: 0, retired: false, resources: new Map() };
    const indexes = await openSearchIndexes(database, limits);
    const indexAndPagesSeconds = since(loading);
    const usage = process.resourceUsage();
    const bytes = entry.size + (given.runner_files ?? []).reduce((sum, f) => sum + f.size, 0);
    const figures: Figures = {
      mode, origin: indexes.origin, downloadedMegabytes: Math.round(bytes / 1e6), downloadSeconds, openSeconds, indexAndPagesSeconds,
      totalSeconds: since(started), cpuSeconds: Number(((usage.userCPUTime + usage.systemCPUTime) / 1e6).toFixed(1)),
      rssMegabytes: Math.round(process.memoryUsage().rss / 1e6), peakRssMegabytes: Math.round(usage.maxRSS / 1024),
    };
    indexes.close();
    instance.closeSync();
    process.stdout.write(`${JSON.stringify(figures)}\n`);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

function runChild(mode: Mode, dataDir: string): Figures {
  const child = spawnSync(process.execPath, [import.meta.filename, '--child', mode, dataDir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (child.status !== 0) throw new Error(`the ${mode} run failed with exit code ${child.status}`);
  return JSON.parse(child.stdout.trim().split('\n').pop()!) as Figures;
}

async function main(): Promise<void> {
  const [first, second, third] = process.argv.slice(2);
  if (first === '--child') return measure(second as Mode, third!);
  if (!first) throw new Error('usage: npm run bench:runner-start -- <DATA_DIR with objects/exports/manifest.json>');
  const files = runChild('files', first);
  const database = runChild('database', first);
  console.table([files, database]);
  const ratio = (a: number, b: number) => Number((a / b).toFixed(2));
  console.log(JSON.stringify({
    command: `npm run bench:runner-start -- ${first}`,
    filesOverDatabase: { total: ratio(files.totalSeconds, database.totalSeconds), indexAndPages: ratio(files.indexAndPagesSeconds, database.indexAndPagesSeconds), cpu: ratio(files.cpuSeconds, database.cpuSeconds), rss: ratio(files.rssMegabytes, database.rssMegabytes) },
  }));
}

await main();
