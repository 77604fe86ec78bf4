/**
 * The migration Job's command against a real PostgreSQL: applies every migration once, then is a
 * no-op; a bad DATABASE_URL exits 1 with a clear message.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const admin = process.env.TEST_DATABASE_URL!;
const name = `uda_migrate_${randomBytes(4).toString('hex')}`;
let url: string;

async function sql<T extends pg.QueryResultRow>(connection: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: connection });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

function migrate(env: Record<string, string>) {
  return spawnSync(join(ROOT, 'node_modules/.bin/node'), [join(ROOT, 'api/src/db/migrate.ts')], {
    env: { PATH: process.env.PATH, LOG_LEVEL: 'info', ...env },
    encoding: 'utf8',
  });
}

beforeAll(async () => {
  await sql(admin, `CREATE DATABASE ${name}`);
  const u = new URL(admin);
  u.pathname = `/${name}`;
  url = u.toString();
});

afterAll(async () => {
  await sql(admin, `DROP DATABASE IF EXISTS ${name}`);
});

describe('node api/src/db/migrate.ts', () => {
  it('applies every migration, then finds nothing to do', async () => {
    const first = migrate({ DATABASE_URL: url });
    expect(first.status).toBe(0);
    expect(first.stdout).toContain('migrations applied');
    const tables = (await sql<{ tablename: string }>(url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")).map((r) => r.tablename);
    expect(tables).toEqual(expect.arrayContaining(['accounts', 'api_keys', 'ledger', 'live_copies', 'datasets']));
    const second = migrate({ DATABASE_URL: url });
    expect(second.status).toBe(0);
    expect(second.stdout).toContain('schema already up to date');
  });

  it('exits 1 naming DATABASE_URL when it is not a postgres URL', () => {
    const run = migrate({ DATABASE_URL: 'mysql://nope' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('DATABASE_URL');
  });
});
