/**
 * Migrations are listed here rather than discovered on disk, so they load the same way under
 * Node's type stripping, jest and a bundled image.
 */
import type { Knex } from 'knex';
import * as core from './0001_core.ts';

const MIGRATIONS: readonly { name: string; module: Knex.Migration }[] = [{ name: '0001_core', module: core }];

export const migrationSource: Knex.MigrationSource<(typeof MIGRATIONS)[number]> = {
  getMigrations: async () => [...MIGRATIONS],
  getMigrationName: (migration) => migration.name,
  getMigration: async (migration) => migration.module,
};
