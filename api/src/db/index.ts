/**
 * The database: PostgreSQL through `pg`, or embedded PGlite through `knex-pglite` when no
 * DATABASE_URL is set (DECISIONS §1). Both are a knex instance; the rest of the code can't tell.
 */
import type { Knex } from 'knex';
import { openPostgres } from './postgres.ts';
import { openPglite } from './pglite.ts';
import { migrationSource } from './migrations/index.ts';

export type Db = Knex;

export function openDb(options: { databaseUrl?: string; poolMax: number; dataDir: string }): Db {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options.poolMax) : openPglite(options.dataDir);
}

export async function migrate(db: Db): Promise<void> {
  await db.migrate.latest({ migrationSource });
}
