/**
 * A fresh PostgreSQL database per test file with the datasets migration applied, and helpers that
 * enqueue uploads the way the API does (see the contract in the final report / migration).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import knexModule from 'knex';
import type { Knex } from 'knex';
import type { ObjectStore } from '@uda/shared/object-store';
import { up } from '@uda/shared/db/datasets';
import type { SheetFormat } from '../src/sheets/formats.ts';

export interface TestDatabase {
  readonly url: string;
  readonly db: Knex;
  /** Another connection pool, as a second worker process would have. */
  connect(): Knex;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `uda_sheets_${randomBytes(6).toString('hex')}`;
  const admin = knexModule.knex({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
  await admin.raw(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const connect = () => knexModule.knex({ client: 'pg', connection: url.toString(), pool: { min: 0, max: 4 } });
  const db = connect();
  await up(db);
  return {
    url: url.toString(),
    db,
    connect,
    async drop() {
      await db.destroy();
      await admin.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.destroy();
    },
  };
}

export interface Upload {
  readonly content: string | Uint8Array;
  readonly format: SheetFormat;
}

/** What `POST /api/v1/datasets` does: store the raw upload, insert a `processing` row. */
export async function createSheet(db: Knex, store: ObjectStore, upload: Upload, accountId = randomUUID()): Promise<string> {
  const id = randomUUID();
  const uploadKey = `uploads/${id}/1`;
  const info = await store.putBytes(uploadKey, upload.content);
  await db('datasets').insert({
    id,
    account_id: accountId,
    slug: `sheet-${id.slice(0, 8)}`,
    name: 'Test sheet',
    status: 'processing',
    upload_key: uploadKey,
    upload_format: upload.format,
    upload_bytes: info.size,
  });
  return id;
}

/** What `PUT /api/v1/datasets/{id}/file` does: a new version, back to `processing`, fresh attempts. */
export async function reupload(db: Knex, store: ObjectStore, id: string, upload: Upload): Promise<number> {
  const row = (await db('datasets').where({ id }).first('version')) as { version: number };
  const version = row.version + 1;
  const uploadKey = `uploads/${id}/${version}`;
  const info = await store.putBytes(uploadKey, upload.content);
  await db('datasets').where({ id }).update({
    version,
    status: 'processing',
    error: null,
    upload_key: uploadKey,
    upload_format: upload.format,
    upload_bytes: info.size,
    attempts: 0,
    locked_until: null,
    updated_at: db.fn.now(),
  });
  return version;
}

export interface DatasetRecord {
  status: string;
  error: string | null;
  row_count: string | null;
  columns: { name: string; type: string }[] | null;
  version: number;
  parquet_key: string | null;
  attempts: number;
  locked_until: Date | null;
}

export async function sheetRow(db: Knex, id: string): Promise<DatasetRecord> {
  return (await db('datasets').where({ id }).first()) as DatasetRecord;
}
