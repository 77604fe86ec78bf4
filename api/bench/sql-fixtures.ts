/**
 * Setup for `sql.bench.ts`: the bench database (the runner benchmark's gutenberg shape), a large
 * export file, the manifest that publishes both, a PostgreSQL database, and child processes that
 * announce themselves with one JSON line.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import knexModule from 'knex';
import { MANIFEST_KEY, manifestSchema, newVersion, versionPrefix } from '@uda/shared/manifest';
import type { ObjectStore } from '@uda/shared/object-store';

export async function createBenchDatabase(rows: number): Promise<{ dir: string; dbPath: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'uda-bench-sql-'));
  const dbPath = join(dir, 'service.db');
  const instance = await DuckDBInstance.create(dbPath);
  const c = await instance.connect();
  await c.run(`CREATE TABLE gutenberg AS SELECT range AS text_id, 'Text' AS type, DATE '1990-01-01' + (range % 10000)::INT AS issued,
    'Book number ' || range AS title, CASE WHEN range % 3 = 0 THEN 'fr' ELSE 'en' END AS language, 'Author ' || (range % 997) AS authors
    FROM range(${rows}) ORDER BY text_id`);
  c.closeSync();
  instance.closeSync();
  return { dir, dbPath };
}

/** A bulk export file of incompressible bytes, written in 1 MB blocks. */
export interface BenchBlob {
  readonly name: 'service.csv.zip' | 'service.parquet.zip';
  readonly path: string;
  readonly megabytes: number;
  key: string;
}

/** The bulk file names the benchmark's export files are published under, one per size. */
export const BLOB_NAMES = ['service.csv.zip', 'service.parquet.zip'] as const;

export async function bigFile(dir: string, megabytes: number, name: BenchBlob['name']): Promise<BenchBlob> {
  const path = join(dir, `${name}.bin`);
  const out = createWriteStream(path);
  for (let i = 0; i < megabytes; i++) if (!out.write(randomBytes(1024 * 1024))) await new Promise<void>((r) => out.once('drain', () => r()));
  await new Promise<void>((r) => out.end(() => r()));
  return { name, path, megabytes, key: '' };
}

export async function publish(store: ObjectStore, dbPath: string, blobs: readonly BenchBlob[]): Promise<void> {
  const version = newVersion(new Date(), randomBytes(3).toString('hex'));
  const db = await store.putFile(`${versionPrefix(version)}service.db`, dbPath);
  // The runner checks the database's sha256 after download.
  const file = (name: string, info: { key: string; size: number; etag: string }, format: 'duckdb' | 'zip', type: string, sha256: string) => ({
    name, key: info.key, kind: name === 'service.db' ? 'database' : 'bulk', format, size: info.size, sha256, etag: info.etag, content_type: type,
  });
  const files = [file('service.db', db, 'duckdb', 'application/octet-stream', await sha256Of(dbPath))];
  for (const blob of blobs) {
    blob.key = `${versionPrefix(version)}${blob.name}`;
    const big = await store.putFile(blob.key, blob.path, { contentType: 'application/zip' });
    files.push(file(blob.name, { ...big, size: (await stat(blob.path)).size }, 'zip', 'application/zip', await sha256Of(blob.path)));
  }
  const manifest = manifestSchema.parse({
    version,
    built_at: new Date().toISOString(),
    tables: { gutenberg: { source: 'gutenberg', rows: 0 } },
    files,
  });
  await store.putBytes(`${versionPrefix(version)}manifest.json`, JSON.stringify(manifest));
  await store.putBytes(MANIFEST_KEY, JSON.stringify(manifest), { contentType: 'application/json' });
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export async function benchDatabase(): Promise<{ url: string; redisUrl: string; drop(): Promise<void> }> {
  const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `uda_bench_sql_${randomBytes(4).toString('hex')}`;
  const onServer = async (sql: string) => {
    const admin = knexModule.knex({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
    try {
      await admin.raw(sql);
    } finally {
      await admin.destroy();
    }
  };
  await onServer(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), redisUrl: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379', drop: () => onServer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

export async function spawnJson<T>(node: string, args: string[]): Promise<{ info: T; child: ChildProcess }> {
  const child = spawn(node, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const info = await new Promise<T>((resolve, reject) => {
    child.stdout!.once('data', (chunk: Buffer) => resolve(JSON.parse(chunk.toString().split('\n')[0] ?? '{}') as T));
    child.once('exit', (code) => reject(new Error(`${args[0]} exited ${code}`)));
  });
  return { info, child };
}
