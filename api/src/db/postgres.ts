import knexModule from 'knex';
import type { Knex } from 'knex';

export function openPostgres(url: string, poolMax: number): Knex {
  return knexModule.knex({ client: 'pg', connection: url, pool: { min: 0, max: poolMax } });
}
