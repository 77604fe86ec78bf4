/**
 * The usage log's outbox (DECISIONS §3 "The ledger is aggregated"): a journal flush writes its
 * charges' per-request records here in the statement that writes their ledger rows, one row per
 * flush holding them all, so a charge in the ledger never lacks its record when its pod is killed.
 * Any pod's usage-log store claims rows (`file`, `claimed_at`), puts their records in the bucket
 * as that Parquet file, then deletes them (`billing/usage-log.ts`).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('usage_outbox', (t) => {
    t.bigIncrements('id').primary();
    t.text('pod').notNullable().comment('the API process whose flush wrote the records');
    t.text('flush_key').notNullable().unique().comment("the flush's own key: a retry of an ambiguous flush writes no second row");
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.jsonb('records').notNullable().comment("the flush's usage records, an array (one per paid request)");
    t.text('file').nullable().comment('the bucket key of the Parquet file a store claimed the row for; null until claimed');
    t.timestamp('claimed_at', { useTz: true }).nullable();
    t.index(['file'], 'usage_outbox_file', { predicate: knex.whereNotNull('file') });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('usage_outbox');
}
