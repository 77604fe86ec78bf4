/**
 * Connected sheets (DECISIONS §8): one row per sheet. The row is both the record the API serves
 * and the ingestion job the sheets worker claims (`status = 'processing'`), so state and job are
 * updated together, atomically. Portable SQL only: runs on PostgreSQL and on PGlite.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('datasets', (t) => {
    t.uuid('id').primary();
    // Text, not a foreign key: the account id's type belongs to the API's schema.
    t.text('account_id').notNullable();
    t.text('slug').notNullable();
    t.text('name').notNullable();
    t.text('status').notNullable().checkIn(['processing', 'ready', 'failed'], 'datasets_status_check');
    t.text('error').comment('User-safe reason when status is failed');
    t.bigInteger('row_count');
    t.jsonb('columns').comment('[{name, type}] of the ingested Parquet');
    t.integer('version').notNullable().defaultTo(1).comment('Bumped on every upload; guards the worker result');
    t.text('upload_key').notNullable().comment('Object key of the raw upload');
    t.text('upload_format').notNullable().checkIn(['csv', 'tsv', 'json', 'ndjson', 'parquet'], 'datasets_format_check');
    t.bigInteger('upload_bytes').notNullable();
    t.text('parquet_key');
    t.integer('attempts').notNullable().defaultTo(0).comment('Ingestion attempts of the current version');
    t.timestamp('locked_until', { useTz: true }).comment('Lease of the worker ingesting the current version');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['account_id', 'slug'], { indexName: 'datasets_account_slug_unique' });
  });
  // The worker's claim scans only pending rows.
  await knex.raw(`CREATE INDEX datasets_pending ON datasets (updated_at) WHERE status = 'processing'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('datasets');
}
