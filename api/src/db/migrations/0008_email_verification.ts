/**
 * Verified sign-up and password reset by email (DECISIONS §5 "Email"). An account records when its
 * email was proven; accounts that exist before this migration were made by operators or signed up
 * before the rule, and stay able to do what they did (verified now). Links carry a single-use
 * token stored only as its SHA-256, like session ids.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('accounts', (t) => {
    t.timestamp('email_verified_at', { useTz: true }).comment('null until the account opened the link sent to its email');
  });
  await knex('accounts').update({ email_verified_at: knex.fn.now() });

  await knex.schema.createTable('email_tokens', (t) => {
    t.text('token_hash').primary().comment('SHA-256 of the token in the link, hex');
    t.uuid('user_id').notNullable().references('dashboard_users.id').onDelete('CASCADE');
    t.text('purpose').notNullable().checkIn(['verify', 'reset'], 'email_tokens_purpose_check');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true });
    t.index(['user_id', 'purpose']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('email_tokens');
  await knex.schema.alterTable('accounts', (t) => {
    t.dropColumn('email_verified_at');
  });
}
