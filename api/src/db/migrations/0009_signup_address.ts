/**
 * The sign-up address of an account (DECISIONS §4 Fair shares): the runner-time budget of failed
 * runs also counts per address across the Free accounts signed up from it, so one address cannot
 * multiply its budget by signing up many accounts. Kept as a peppered HMAC of `req.ip`, not the
 * address itself: it only ever needs to be compared. Null for accounts the admin API created.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('accounts', (t) => {
    t.text('signup_address').nullable().comment('HMAC of the address the dashboard sign-up came from; null for admin-created accounts');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('accounts', (t) => {
    t.dropColumn('signup_address');
  });
}
