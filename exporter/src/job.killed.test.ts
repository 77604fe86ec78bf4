/**
 * An export killed outright (SIGKILL: no `catch` or `finally` of it runs) at any stage, as a node's
 * loss or an OOM kill would: the published version stays the one served, every object the killed run
 * had stored under its own version is whole (the same bytes as the file it built), and the next run
 * removes what the killed ones left, in the store and on the work disk.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLogger } from '@uda/shared/logger';
import { MANIFEST_KEY, manifestSchema, versionManifestKey, versionPrefix, type Manifest } from '@uda/shared/manifest';
import { createTestBucket, type TestBucket } from '@uda/test-support/s3';
import { runExport } from './job.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const NODE = join(ROOT, 'node_modules', '.bin', 'node');
const DATA = join(import.meta.dirname, '..', 'data');

let bucket: TestBucket;
let dataDir: string;
let published: Manifest;

async function objectBytes(key: string): Promise<Buffer | undefined> {
  const object = await bucket.store.get(key);
  if (!object) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of object.body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function currentManifest(): Promise<Manifest> {
  return manifestSchema.parse(JSON.parse((await objectBytes(MANIFEST_KEY))!.toString('utf8')));
}

interface LogLine {
  readonly msg?: string;
  readonly stage?: string;
  readonly version?: string;
}

/** Runs `npm run export` against the bucket and SIGKILLs it at the first log line `killAt` picks; returns its version. */
function exportKilledAt(killAt: (line: LogLine) => boolean): Promise<{ version: string | undefined; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const env = { PATH: process.env.PATH, ...bucket.env, DATA_DIR: dataDir, EXPORT_INPUT_DIR: DATA, EXPORT_DUCKDB_MEMORY_LIMIT: '512MB', LOG_LEVEL: 'info' };
    const child = spawn(NODE, [join(ROOT, 'exporter/src/main.ts')], { env, stdio: ['ignore', 'pipe', 'ignore'] });
    let version: string | undefined;
    createInterface({ input: child.stdout }).on('line', (text) => {
      const line = JSON.parse(text) as LogLine;
      version ??= line.version;
      if (killAt(line)) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('exit', (_code, signal) => resolve({ version, signal }));
  });
}

/** The build's own copy of a stored object, left on disk by the killed run (`build-<version>/`). */
function builtPath(version: string, key: string): string {
  const name = key.slice(versionPrefix(version).length);
  return join(dataDir, 'exporter', `build-${version}`, name.startsWith('tables/') ? basename(name) : name);
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

beforeAll(async () => {
  bucket = await createTestBucket('killed');
  dataDir = await mkdtemp(join(tmpdir(), 'uda-export-killed-'));
  const logger = createLogger({ name: 'exporter-test', level: 'silent' });
  const work = join(dataDir, 'exporter');
  published = (await runExport({ inputDir: DATA, workDir: work, store: bucket.store, keepVersions: 3, duckdb: { memoryLimit: '512MB', threads: 2 }, logger })).manifest;
});

afterAll(async () => {
  await bucket.remove();
  await rm(dataDir, { recursive: true, force: true });
});

/** Where a run is killed: each stage's first log line. */
const KILL_POINTS: [string, (line: LogLine) => boolean][] = [
  ['while the tables load', (line) => line.msg === 'table built'],
  ['while table files go up', (line) => line.msg === 'table files built'],
  ['while the search index is built', (line) => line.stage?.startsWith('search index') === true],
  ['while the zips are finished and service.db goes up', (line) => line.stage === 'checkpoint'],
];

describe('an export killed at any stage', () => {
  const killed: string[] = [];
  let storedByKilled = 0;

  for (const [when, killAt] of KILL_POINTS) {
    it(`${when}: leaves the published version served and nothing half-uploaded`, async () => {
      const { version, signal } = await exportKilledAt(killAt);
      expect(signal).toBe('SIGKILL');
      expect(version).toBeDefined();
      killed.push(version!);
      expect(await currentManifest()).toEqual(published);
      const stored = await bucket.store.list(versionPrefix(version!));
      expect(stored.map((o) => o.key)).not.toContain(versionManifestKey(version!));
      storedByKilled += stored.length;
      for (const { key } of stored) {
        const [object, built] = [await objectBytes(key), await readFile(builtPath(version!, key))];
        expect({ key, sha256: sha256(object!) }).toEqual({ key, sha256: sha256(built) });
      }
    });
  }

  it('and the next run publishes, removing what the killed runs left in the store and on disk', async () => {
    const { version, signal } = await exportKilledAt(() => false);
    expect(signal).toBeNull();
    expect((await currentManifest()).version).toBe(version);
    for (const leftover of killed) expect(await bucket.store.list(versionPrefix(leftover))).toEqual([]);
    expect(await readdir(join(dataDir, 'exporter'))).toEqual([]);
    // The checks above compared stored objects: some killed run had stored some.
    expect(storedByKilled).toBeGreaterThan(0);
  });
});
