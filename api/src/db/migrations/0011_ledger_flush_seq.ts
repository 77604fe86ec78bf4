/**
 * A lookups row of the ledger stands for one pod's lookups under one lease in one UTC day
 * (DECISIONS §3 "The ledger is aggregated"): each journal flush adds its amount and requests to the
 * row, and `flush_seq` is the last flush that did, so the retry of a flush whose answer was lost
 * adds nothing twice. A window charge's row is written once and has none.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('ledger', (t) => {
    t.bigInteger('flush_seq').nullable().comment('the last journal flush that added to this lookups row (its retry adds nothing)');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('ledger', (t) => t.dropColumn('flush_seq'));
}
