/**
 * Migrations are listed here rather than discovered on disk, so they load the same way under
 * Node's type stripping, jest and a bundled image.
 */
import type { Knex } from 'knex';
import * as datasets from '@uda/shared/db/datasets';
import * as liveCopies from '@uda/shared/db/live-copies';
import * as core from './0001_core.ts';
import * as dashboard from './0005_dashboard.ts';
import * as creditLeases from './0006_credit_leases.ts';
import * as ledgerRequests from './0007_ledger_requests.ts';
import * as emailVerification from './0008_email_verification.ts';
import * as signupAddress from './0009_signup_address.ts';
import * as usageOutbox from './0010_usage_outbox.ts';
import * as ledgerFlushSeq from './0011_ledger_flush_seq.ts';

/** Tables another workspace also uses live in `@uda/shared/db` (the exporter reads them). */
const MIGRATIONS: readonly { name: string; module: Knex.Migration }[] = [
  { name: '0001_core', module: core },
  { name: '0002_live_copies', module: liveCopies },
  { name: '0003_datasets', module: datasets },
  { name: '0005_dashboard', module: dashboard },
  { name: '0006_credit_leases', module: creditLeases },
  { name: '0007_ledger_requests', module: ledgerRequests },
  { name: '0008_email_verification', module: emailVerification },
  { name: '0009_signup_address', module: signupAddress },
  { name: '0010_usage_outbox', module: usageOutbox },
  { name: '0011_ledger_flush_seq', module: ledgerFlushSeq },
];

export const migrationSource: Knex.MigrationSource<(typeof MIGRATIONS)[number]> = {
  getMigrations: async () => [...MIGRATIONS],
  getMigrationName: (migration) => migration.name,
  getMigration: async (migration) => migration.module,
};
