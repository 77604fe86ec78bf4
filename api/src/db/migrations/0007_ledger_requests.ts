/**
 * The ledger is aggregated (DECISIONS §3 "The ledger is aggregated"): a flush writes one charge row
 * per account and lease for the lookups it carries, with how many requests the row stands for. The
 * per-request records go to the usage log in the bucket (`billing/usage-log.ts`), not here.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('ledger', (t) => {
    t.integer('requests').notNullable().defaultTo(1).comment('how many paid requests this row stands for (a flush of lookups: many)');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('ledger', (t) => t.dropColumn('requests'));
}
