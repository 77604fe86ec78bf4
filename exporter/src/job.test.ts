/**
 * End to end: a real build of the sample data into the S3-compatible server, then what a client of
 * the exports sees there. Failures must leave the previous export served.
 */
import { createHash } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import yauzl from 'yauzl';
import { allTables, SOURCES } from '@uda/shared/catalog';
import { createLogger } from '@uda/shared/logger';
import { MANIFEST_KEY, manifestSchema, type Manifest } from '@uda/shared/manifest';
import type { ObjectStore } from '@uda/shared/object-store';
import { createTestBucket, rawS3Client, type TestBucket } from '@uda/test-support/s3';
import { runExport, type ExportJobOptions } from './job.ts';
import { pwcTables } from './ingest/pwc.ts';

const DATA = join(import.meta.dirname, '..', 'data');
const logger = createLogger({ name: 'exporter-test', level: 'silent' });

let bucket: TestBucket;
let work: string;
let first: Manifest;

function options(store: ObjectStore, extra: Partial<ExportJobOptions> = {}): ExportJobOptions {
  return { inputDir: DATA, workDir: work, store, keepVersions: 3, duckdb: { memoryLimit: '512MB', threads: 2 }, logger, ...extra };
}

async function bytesOf(key: string, range?: string): Promise<{ status: number | undefined; bytes: Buffer; contentRange?: string }> {
  const out = await rawS3Client().send(new GetObjectCommand({ Bucket: bucket.bucket, Key: key, Range: range }));
  const bytes = Buffer.from(await out.Body!.transformToByteArray());
  return { status: out.$metadata.httpStatusCode, bytes, ...(out.ContentRange ? { contentRange: out.ContentRange } : {}) };
}

async function currentManifest(): Promise<Manifest> {
  return manifestSchema.parse(JSON.parse((await bytesOf(MANIFEST_KEY)).bytes.toString('utf8')));
}

function zipEntries(buffer: Buffer): Promise<string[]> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buffer, { lazyEntries: true }, (error, zip) => {
      if (error || !zip) return reject(error);
      const names: string[] = [];
      zip.on('entry', (entry: yauzl.Entry) => (names.push(entry.fileName), zip.readEntry()));
      zip.on('end', () => resolve(names));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

beforeAll(async () => {
  bucket = await createTestBucket('export');
  work = await mkdtemp(join(tmpdir(), 'uda-export-'));
  first = (await runExport(options(bucket.store))).manifest;
});

afterAll(async () => {
  await bucket.remove();
  await rm(work, { recursive: true, force: true });
});

describe('a build of the sample data', () => {
  it('switches exports/manifest.json to the new version', async () => {
    expect(await currentManifest()).toEqual(first);
    expect(Object.keys(first.tables).sort()).toEqual(allTables().sort());
  });

  it('uploads every listed file with the listed size and sha256', async () => {
    const listed = await bucket.store.list(`exports/${first.version}/`);
    const sizes = new Map(listed.map((o) => [o.key, o.size]));
    for (const file of [...first.files, ...(first.runner_files ?? [])]) {
      expect(sizes.get(file.key)).toBe(file.size);
      const { bytes } = await bytesOf(file.key);
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(file.sha256);
    }
    // Per table one Parquet and one CSV, plus service.db and the two zips, plus the version manifest.
    expect(first.files).toHaveLength(allTables().length * 2 + 3);
    // Apart from them, the runners' files: the lookups' index and one page file per stored source.
    const stored = SOURCES.filter((s) => s.kind === 'stored').map((s) => s.id);
    expect(first.runner_files?.map((f) => f.name).sort()).toEqual(['runner/search-index.bin', ...stored.map((s) => `runner/pages-${s}.jsonl`)].sort());
    expect(first.files.filter((f) => f.name.startsWith('runner/'))).toEqual([]);
    expect(listed).toHaveLength(first.files.length + first.runner_files!.length + 1);
  });

  it('serves a ranged GET of service.db as 206 with the right bytes', async () => {
    const db = first.files.find((f) => f.name === 'service.db')!;
    const whole = (await bytesOf(db.key)).bytes;
    const part = await bytesOf(db.key, 'bytes=4096-8191');
    expect(part.status).toBe(206);
    expect(part.contentRange).toBe(`bytes 4096-8191/${db.size}`);
    expect(part.bytes.equals(whole.subarray(4096, 8192))).toBe(true);
  });

  it('puts one file per table in each zip', async () => {
    for (const [name, extension] of [['service.parquet.zip', 'parquet'], ['service.csv.zip', 'csv']] as const) {
      const zip = first.files.find((f) => f.name === name)!;
      const entries = await zipEntries((await bytesOf(zip.key)).bytes);
      expect(entries.sort()).toEqual(allTables().map((t) => `${t}.${extension}`).sort());
    }
  });

  it('produces a service.db that opens read-only with the manifest row counts', async () => {
    const db = first.files.find((f) => f.name === 'service.db')!;
    const path = join(work, 'downloaded.db');
    await writeFile(path, (await bytesOf(db.key)).bytes);
    const instance = await DuckDBInstance.create(path, { access_mode: 'READ_ONLY' });
    const connection = await instance.connect();
    try {
      for (const [table, { rows }] of Object.entries(first.tables)) {
        const reader = await connection.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM "${table}"`);
        expect({ table, rows: reader.getRowObjects()[0]?.n }).toEqual({ table, rows });
      }
      expect(first.tables.gutenberg!.rows).toBe(1823);
      // Besides the catalog's tables, only the lookups' search index: five tables per stored source.
      const others = (await connection.runAndReadAll('SELECT table_name FROM duckdb_tables()')).getRowObjects()
        .map((r) => String(r.table_name)).filter((t) => !allTables().includes(t)).sort();
      const stored = SOURCES.filter((s) => s.kind === 'stored').map((s) => s.id);
      expect(others).toEqual(stored.flatMap((s) => ['docs', 'idterms', 'postings', 'stats', 'titles'].map((kind) => `_search_${s}_${kind}`)).sort());
      expect(first.tables.census_counties!.rows).toBe(3193);
      await expect(connection.run('CREATE TABLE x (a INTEGER)')).rejects.toThrow(/read-only/i);
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });
});

describe('a failed build', () => {
  it('with a corrupt input row fails with file and line, and leaves the previous version served', async () => {
    const input = join(work, 'corrupt-input');
    await cp(DATA, input, { recursive: true });
    const path = join(input, 'food/food.csv');
    const lines = (await readFile(path, 'utf8')).split('\n');
    lines[10] = '"9001030","sr_legacy_food","Cheese, unfinished quote,"1","2011-09-01"';
    await writeFile(path, lines.join('\n'));

    // Files go up while later tables load: whatever went up before food's failure is removed again.
    const uploaded: string[] = [];
    await expect(runExport(options(bucket.store, { inputDir: input, onUploaded: (key) => uploaded.push(key) }))).rejects.toThrow(/^food\/food\.csv:11: malformed CSV/);
    for (const key of uploaded) expect({ key, stored: await bucket.store.head(key) }).toEqual({ key, stored: undefined });
    expect(await currentManifest()).toEqual(first);
    const versions = new Set((await bucket.store.list('exports/')).map((o) => o.key.split('/')[1]));
    expect([...versions].sort()).toEqual([first.version, 'manifest.json'].sort());
  });
});

describe('retention', () => {
  it('keeps the newest three complete versions', async () => {
    const small = options(bucket.store, { tables: pwcTables(DATA) });
    const builds: string[] = [first.version];
    for (let i = 0; i < 3; i++) builds.push((await runExport(small)).manifest.version);
    const versions = new Set((await bucket.store.list('exports/')).map((o) => o.key.split('/')[1]));
    versions.delete('manifest.json');
    expect([...versions].sort()).toEqual(builds.slice(1).sort());
    expect((await currentManifest()).version).toBe(builds[3]);
  });
});
