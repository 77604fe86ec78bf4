/**
 * Dashboard sign-in and payment requests (DECISIONS §5 and §10). A dashboard user owns
 * one account; sessions are stored by the SHA-256 of their id, never the id itself. Payment
 * requests are what the shipped payment adapter records for an operator to approve.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('dashboard_users', (t) => {
    t.uuid('id').primary();
    t.uuid('account_id').notNullable().unique().references('accounts.id').onDelete('CASCADE');
    t.text('email').notNullable().unique().comment('lower-cased');
    t.text('password_hash').notNullable().comment('scrypt$N$r$p$salt$hash');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('dashboard_sessions', (t) => {
    t.text('id_hash').primary().comment('SHA-256 of the session id, hex');
    t.uuid('user_id').notNullable().references('dashboard_users.id').onDelete('CASCADE');
    t.text('csrf_token').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('authenticated_at', { useTz: true }).notNullable().comment('last time the password was checked');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.index(['user_id']);
  });

  await knex.schema.createTable('payment_requests', (t) => {
    t.uuid('id').primary();
    t.uuid('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('kind').notNullable().checkIn(['upgrade', 'topoff'], 'payment_requests_kind_check');
    t.text('tier').checkIn(['free', 'developer', 'pro'], 'payment_requests_tier_check');
    t.bigInteger('amount_micro');
    t.text('status').notNullable().defaultTo('pending').checkIn(['pending', 'approved', 'rejected'], 'payment_requests_status_check');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('decided_at', { useTz: true });
    t.index(['account_id', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('payment_requests');
  await knex.schema.dropTable('dashboard_sessions');
  await knex.schema.dropTable('dashboard_users');
}
