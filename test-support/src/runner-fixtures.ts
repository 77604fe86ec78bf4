/**
 * Test data: small DuckDB files with tables named as in the catalog, published to the object store
 * with a manifest in the exporter's shape (`manifestSchema`), so the runner follows the same path
 * as in production.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { MANIFEST_KEY, manifestSchema, newVersion, versionPrefix } from '@uda/shared/manifest';
import type { Manifest } from '@uda/shared/manifest';
import type { ObjectStore } from '@uda/shared/object-store';

export interface FixtureOptions {
  /** Rows in `gutenberg`; tests tell versions apart by this count. */
  readonly books?: number;
}

/** Builds a fixture database file and returns its path. */
export async function buildFixtureDb(path: string, { books = 5000 }: FixtureOptions = {}): Promise<string> {
  await rm(path, { force: true });
  const instance = await DuckDBInstance.create(path);
  const c = await instance.connect();
  await c.run(`CREATE TABLE gutenberg AS SELECT range AS text_id, 'Text' AS type, DATE '2000-01-01' + range::INT AS issued,
    'Book ' || range AS title, CASE WHEN range % 3 = 0 THEN 'fr' ELSE 'en' END AS language, 'Author ' || (range % 97) AS authors
    FROM range(${books})`);
  await c.run(`CREATE TABLE census_states AS SELECT * FROM (VALUES ('Ohio', 11785935), ('Texas', 30503301), ('Vermont', 647464)) t(name, pop)`);
  await c.run(`CREATE TABLE wiki AS SELECT 'Article ' || range AS title, 'https://en.wikipedia.org/wiki/A' || range AS url FROM range(20)`);
  c.closeSync();
  instance.closeSync();
  return path;
}

/** Uploads a database as a new export version and switches `exports/manifest.json` to it. */
/** `sha256` overrides the real digest, to publish a manifest that must fail verification. */
export async function publishDatabase(store: ObjectStore, dbPath: string, when = new Date(), sha256?: string): Promise<Manifest> {
  const version = newVersion(when, randomBytes(3).toString('hex'));
  const bytes = await readFile(dbPath);
  const key = `${versionPrefix(version)}service.db`;
  const info = await store.putFile(key, dbPath, { contentType: 'application/octet-stream' });
  const manifest = manifestSchema.parse({
    version,
    built_at: when.toISOString(),
    tables: { gutenberg: { source: 'gutenberg', rows: 0 } },
    files: [{
      name: 'service.db', key, kind: 'database', format: 'duckdb', size: bytes.length,
      sha256: sha256 ?? createHash('sha256').update(bytes).digest('hex'), etag: info.etag, content_type: 'application/octet-stream',
    }],
  });
  await store.putBytes(`${versionPrefix(version)}manifest.json`, JSON.stringify(manifest));
  await store.putBytes(MANIFEST_KEY, JSON.stringify(manifest), { contentType: 'application/json' });
  return manifest;
}

export function tempPath(name: string): string {
  return join(tmpdir(), `uda-runner-${randomBytes(4).toString('hex')}-${name}`);
}

/** Writes a Parquet file with DuckDB, for connected-sheet tests. */
export async function writeParquet(path: string, selectSql: string): Promise<string> {
  const instance = await DuckDBInstance.create(':memory:');
  const c = await instance.connect();
  await c.run(`COPY (${selectSql}) TO '${path}' (FORMAT parquet)`);
  c.closeSync();
  instance.closeSync();
  return path;
}
