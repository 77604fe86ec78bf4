/**
 * The live tables also take the answers the API kept in PostgreSQL (a real server, a fresh database).
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import knex, { type Knex } from 'knex';
import pg from 'pg';
import { up } from '@uda/shared/db/live-copies';
import { liveTables } from './live.ts';
import { PostgresLiveCopies } from './live-copies.ts';
import type { Row, TableSpec } from './table-spec.ts';

const DATA = join(import.meta.dirname, '..', '..', 'data');
const admin = process.env.TEST_DATABASE_URL!;
const name = `uda_export_live_${randomBytes(4).toString('hex')}`;
let url: string;
let db: Knex;
let copies: PostgresLiveCopies;

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(sql);
  await client.end();
}

async function collect(table: TableSpec): Promise<Row[]> {
  const rows: Row[] = [];
  for await (const row of table.rows()) rows.push(row);
  return rows;
}

beforeAll(async () => {
  await adminQuery(`CREATE DATABASE ${name}`);
  const u = new URL(admin);
  u.pathname = `/${name}`;
  url = u.toString();
  db = knex({ client: 'pg', connection: url });
  await up(db);
  const pypi = (version: string) => ({
    results: [{ name: 'six', version, summary: 'Python 2 and 3 compatibility utilities', license: 'MIT', author: null, requires_python: null, home_page: null, package_url: 'https://pypi.org/project/six/' }],
    total: 1,
  });
  await db('live_copies').insert([
    { source: 'pypi', normalized_query: 'six', payload: JSON.stringify(pypi('1.16.1')), fetched_at: new Date('2026-11-01T00:00:00Z') },
    { source: 'pypi', normalized_query: 'six compat', payload: JSON.stringify(pypi('1.17.0')), fetched_at: new Date('2026-11-20T00:00:00Z') },
  ]);
  copies = new PostgresLiveCopies(url);
});

afterAll(async () => {
  await copies.close();
  await db.destroy();
  await adminQuery(`DROP DATABASE IF EXISTS ${name}`);
});

describe('live tables from kept answers', () => {
  it('merge the kept answers over the snapshot files, the newest answer winning', async () => {
    const pypi = liveTables(DATA, copies).find((t) => t.name === 'pypi')!;
    expect(await collect(pypi)).toEqual([expect.objectContaining({ name: 'six', version: '1.17.0' })]);
  });

  it('leave the other sources to their snapshots', async () => {
    const arxiv = liveTables(DATA, copies).find((t) => t.name === 'arxiv')!;
    expect(await collect(arxiv)).toHaveLength(10);
  });
});
