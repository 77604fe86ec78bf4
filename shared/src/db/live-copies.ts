/**
 * Stored copies of live answers: the stale fallback and the exporter's source for the
 * live sources' SQL tables. One row per (source, normalized query), replaced on each success.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('live_copies', (t) => {
    t.text('source').notNullable();
    t.text('normalized_query').notNullable();
    t.jsonb('payload').notNullable();
    t.timestamp('fetched_at', { useTz: true }).notNullable();
    t.unique(['source', 'normalized_query'], { indexName: 'live_copies_source_query_unique' });
  });
  // The exporter reads each source's copies in one pass.
  await knex.schema.alterTable('live_copies', (t) => t.index(['source', 'fetched_at'], 'live_copies_source_fetched_idx'));
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('live_copies');
}
