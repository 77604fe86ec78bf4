import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import knexModule from 'knex';
import type { Knex } from 'knex';
import ClientPgLite from 'knex-pglite';

/** PGlite is one connection in one process: knex-pglite fixes the pool at 1, which serialises charges. */
export function openPglite(dataDir: string): Knex {
  const filename = join(dataDir, 'pglite');
  mkdirSync(filename, { recursive: true });
  return knexModule.knex({ client: ClientPgLite, dialect: 'postgres', connection: { filename } } as Knex.Config);
}
