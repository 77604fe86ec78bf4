/**
 * The object store going away in the middle of an upload: the build fails, and once the store is
 * back, the previous version is still the one served, whole.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import S3rver from 's3rver';
import { createLogger } from '@uda/shared/logger';
import { ObjectStoreError, S3Store } from '@uda/shared/object-store';
import { runExport, type ExportJobOptions } from './job.ts';
import { readCurrentManifest } from './publish.ts';
import { pwcTables } from './ingest/pwc.ts';
import { secTables } from './ingest/sec.ts';

const DATA = join(import.meta.dirname, '..', 'data');
const BUCKET = 'exports-outage';

let dir: string;
let server: S3rver;
let port: number;

async function startServer(): Promise<void> {
  server = new S3rver({ port, address: '127.0.0.1', silent: true, directory: dir, configureBuckets: [{ name: BUCKET, configs: [] }] });
  ({ port } = (await server.run()) as { port: number });
}

function store(): S3Store {
  return new S3Store({
    bucket: BUCKET,
    region: 'us-east-1',
    endpoint: `http://127.0.0.1:${port}`,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    forcePathStyle: true,
    partSizeBytes: 5 * 1024 * 1024,
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'uda-outage-'));
  port = 0;
  await startServer();
});

afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the object store going away mid-upload', () => {
  it('fails the build and leaves the previous manifest and files served', async () => {
    const work = join(dir, 'work');
    const base: ExportJobOptions = {
      inputDir: DATA,
      workDir: work,
      store: store(),
      keepVersions: 3,
      duckdb: { memoryLimit: '256MB', threads: 1 },
      logger: createLogger({ name: 'test', level: 'silent' }),
      tables: pwcTables(DATA),
    };
    const previous = (await runExport(base)).manifest;

    let uploads = 0;
    const failing = runExport({
      ...base,
      tables: [...pwcTables(DATA), ...secTables(DATA)],
      onUploaded: () => {
        // The first file is up; take the server away before the rest.
        if (++uploads === 1) void server.close();
      },
    });
    await expect(failing).rejects.toBeInstanceOf(ObjectStoreError);

    await startServer();
    const after = store();
    expect(await readCurrentManifest(after)).toEqual(previous);
    for (const file of previous.files) expect((await after.head(file.key))?.size).toBe(file.size);
  });
});
