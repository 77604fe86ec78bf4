/**
 * Credit leases (off a lookup's hot path, `billing/leases.ts`): a lease moves a slice of an
 * account's balance out of its buckets (a `lease` ledger row) so lookups can spend it in Redis;
 * the charges spent under it are written later with `lease_id` set and leave the buckets alone,
 * and settling returns what was not spent (a `lease_return` row). An account has at most one open
 * lease. `balance_version` counts every change of an account's buckets, so a cached copy of the
 * buckets is never overwritten by an older one.
 */
import type { Knex } from 'knex';

const KINDS_BEFORE = `'charge', 'refund'`;
const KINDS_AFTER = `'charge', 'refund', 'lease', 'lease_return'`;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('credit_leases', (t) => {
    t.uuid('id').primary();
    t.uuid('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.bigInteger('amount_micro').notNullable().defaultTo(0).comment('everything moved into the lease so far');
    t.bigInteger('grant_micro').notNullable().defaultTo(0).comment('part of amount taken from the grant bucket');
    t.bigInteger('topoff_micro').notNullable().defaultTo(0).comment('part of amount taken from the top-off bucket');
    t.integer('parts').notNullable().defaultTo(0).comment('lease ledger rows written: the next one is lease:<id>#<parts>');
    t.text('period').notNullable().comment('YYYY-MM the grant part belongs to');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('settled_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('CREATE UNIQUE INDEX credit_leases_one_open ON credit_leases (account_id) WHERE settled_at IS NULL');
  await knex.raw('CREATE INDEX credit_leases_open_expiry ON credit_leases (expires_at) WHERE settled_at IS NULL');

  await knex.schema.alterTable('ledger', (t) => {
    t.uuid('lease_id').references('credit_leases.id').comment('set on a lease, its return, and the charges and refunds spent under it');
    t.index(['lease_id']);
  });
  await knex.raw('ALTER TABLE ledger DROP CONSTRAINT ledger_kind_check');
  await knex.raw(`ALTER TABLE ledger ADD CONSTRAINT ledger_kind_check CHECK (kind IN (${KINDS_AFTER}))`);

  await knex.schema.alterTable('accounts', (t) => {
    t.bigInteger('balance_version').notNullable().defaultTo(0);
  });
  await knex.raw(`
CREATE FUNCTION accounts_balance_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.balance_version := OLD.balance_version + 1;
  RETURN NEW;
END $$`);
  await knex.raw(`
CREATE TRIGGER accounts_balance_version BEFORE UPDATE OF grant_micro, topoff_micro, period, tier ON accounts
FOR EACH ROW EXECUTE FUNCTION accounts_balance_version()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER accounts_balance_version ON accounts');
  await knex.raw('DROP FUNCTION accounts_balance_version()');
  await knex.schema.alterTable('accounts', (t) => t.dropColumn('balance_version'));
  await knex.raw(`DELETE FROM ledger WHERE kind NOT IN (${KINDS_BEFORE})`);
  await knex.raw('ALTER TABLE ledger DROP CONSTRAINT ledger_kind_check');
  await knex.raw(`ALTER TABLE ledger ADD CONSTRAINT ledger_kind_check CHECK (kind IN (${KINDS_BEFORE}))`);
  await knex.schema.alterTable('ledger', (t) => t.dropColumn('lease_id'));
  await knex.schema.dropTable('credit_leases');
}
