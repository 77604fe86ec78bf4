/**
 * Test support: the runner files of an export the real exporter CLI built from generated inputs at
 * a scale (`npm run data:generate`), for tests that need real-sized posting lists. It takes minutes;
 * with SCALED_EXPORT_DATA set to a DATA_DIR that already holds such an export, that one is used.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MANIFEST_KEY, manifestSchema } from '@uda/shared/manifest';
import { INDEX_FILE_NAME } from '@uda/search/index';

const ROOT = join(import.meta.dirname, '..', '..');
const NODE = join(ROOT, 'node_modules/.bin/node');

export interface ScaledExport {
  /** The export's `search-index.bin`. */
  readonly indexPath: string;
  remove(): Promise<void>;
}

/** The published version's index file: the manifest names the version. */
async function indexPathIn(dataDir: string): Promise<string> {
  const { version } = manifestSchema.parse(JSON.parse(await readFile(join(dataDir, 'objects', MANIFEST_KEY), 'utf8')));
  return join(dataDir, 'objects', 'exports', version, 'runner', INDEX_FILE_NAME);
}

export async function scaledExport(scale: number): Promise<ScaledExport> {
  const given = process.env.SCALED_EXPORT_DATA;
  if (given) return { indexPath: await indexPathIn(given), remove: async () => undefined };
  const dir = await mkdtemp(join(tmpdir(), `uda-scale-${scale}-`));
  const run = promisify(execFile);
  await run(NODE, [join(ROOT, 'exporter/bench/generate-data.ts'), '--scale', String(scale), '--out', join(dir, 'input')], { maxBuffer: 1 << 26 });
  await run(NODE, [join(ROOT, 'exporter/src/main.ts')], {
    env: { PATH: process.env.PATH, DATA_DIR: join(dir, 'data'), EXPORT_INPUT_DIR: join(dir, 'input'), LOG_LEVEL: 'silent', EXPORT_DUCKDB_MEMORY_LIMIT: '2GB' },
    maxBuffer: 1 << 26,
  });
  return { indexPath: await indexPathIn(join(dir, 'data')), remove: () => rm(dir, { recursive: true, force: true }) };
}
