/**
 * Accounts, API keys and the credits ledger (DECISIONS §3 and §5). Money is integer
 * micro-USD in bigint columns. Runs on PostgreSQL and PGlite.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('accounts', (t) => {
    t.uuid('id').primary();
    t.text('email').notNullable();
    t.text('tier').notNullable().checkIn(['free', 'developer', 'pro'], 'accounts_tier_check');
    t.bigInteger('grant_micro').notNullable();
    t.bigInteger('topoff_micro').notNullable().defaultTo(0);
    t.text('period').notNullable().comment('YYYY-MM (UTC) the grant bucket belongs to; older means a lazy reset is due');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  // The balance can never go below zero, whatever the code does.
  await knex.raw('ALTER TABLE accounts ADD CONSTRAINT accounts_grant_nonneg CHECK (grant_micro >= 0)');
  await knex.raw('ALTER TABLE accounts ADD CONSTRAINT accounts_topoff_nonneg CHECK (topoff_micro >= 0)');

  await knex.schema.createTable('api_keys', (t) => {
    t.uuid('id').primary();
    t.uuid('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('lookup_hash').notNullable().unique().comment('HMAC-SHA-256(pepper, key), hex');
    t.text('ciphertext').notNullable().comment('AES-256-GCM of the key, for Reveal');
    t.text('prefix').notNullable();
    t.text('name').notNullable();
    t.text('status').notNullable().checkIn(['active', 'deactivated', 'revoked'], 'api_keys_status_check');
    t.boolean('legacy').notNullable().defaultTo(false);
    t.timestamp('last_used_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`CREATE UNIQUE INDEX api_keys_one_active ON api_keys (account_id) WHERE status = 'active'`);

  await knex.schema.createTable('ledger', (t) => {
    t.bigIncrements('id');
    t.uuid('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('idempotency_key').notNullable().unique();
    t.text('kind').notNullable().checkIn(['charge', 'refund'], 'ledger_kind_check');
    t.bigInteger('amount_micro').notNullable().comment('positive for a charge, negative for a refund');
    t.bigInteger('grant_micro').notNullable().comment('part taken from (or returned to) the grant bucket');
    t.bigInteger('topoff_micro').notNullable().comment('part taken from (or returned to) the top-off bucket');
    t.text('period').notNullable();
    t.jsonb('breakdown').notNullable().defaultTo('[]');
    t.text('request_id');
    t.text('query_id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['account_id', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('ledger');
  await knex.schema.dropTable('api_keys');
  await knex.schema.dropTable('accounts');
}
