/**
 * The ingestion queue is the `datasets` table itself. Why PostgreSQL and not Redis: the sheet's
 * record already lives here, so its state and its job are one row, claimed and completed with
 * plain transactional UPDATEs. There is no second system to keep consistent with the first (no
 * job that outlives its deleted sheet, no `ready` record whose job is still queued), and the
 * embedded mode gets the same behaviour from PGlite.
 */
import type { Knex } from 'knex';
import type { SheetFormat } from './formats.ts';
import type { SheetColumn } from './ingest.ts';

export interface ClaimedJob {
  readonly id: string;
  readonly accountId: string;
  readonly version: number;
  readonly uploadKey: string;
  readonly format: SheetFormat;
  readonly attempts: number;
}

export type ClaimOutcome = { kind: 'none' } | { kind: 'claimed'; job: ClaimedJob } | { kind: 'gave-up'; id: string };

interface DatasetRow {
  id: string;
  account_id: string;
  version: number;
  upload_key: string;
  upload_format: SheetFormat;
  attempts: number;
}

export function giveUpMessage(maxAttempts: number): string {
  return `The file could not be processed after ${maxAttempts} attempts.`;
}

/**
 * Claims a pending sheet whose lease is free: its own transaction, `SKIP LOCKED` so that concurrent
 * workers never wait on or take the same row. A row that already used every attempt (its workers
 * crashed) is marked failed instead, so nothing stays `processing` forever.
 *
 * Fair between accounts: one account's backlog must not hold up another's upload. The
 * order is the account with the fewest jobs in flight, then the one served longest ago (its last
 * finished sheet; never served first), then the oldest upload: with one worker that is round-robin
 * over the accounts that wait, and with several no account takes a second worker while another
 * account waits.
 */
export async function claimJob(db: Knex, options: { leaseSeconds: number; maxAttempts: number }): Promise<ClaimOutcome> {
  return db.transaction(async (trx) => {
    const accounts = trx('datasets')
      .select('account_id')
      .select(trx.raw(`count(*) FILTER (WHERE status = 'processing' AND locked_until >= now()) AS busy`))
      .select(trx.raw(`max(updated_at) FILTER (WHERE status <> 'processing') AS served`))
      .whereIn('account_id', trx('datasets').select('account_id').where('status', 'processing'))
      .groupBy('account_id')
      .as('a');
    const row = (await trx('datasets as d')
      .select('d.id', 'd.account_id', 'd.version', 'd.upload_key', 'd.upload_format', 'd.attempts')
      .leftJoin(accounts, 'a.account_id', 'd.account_id')
      .where('d.status', 'processing')
      .andWhere((q) => void q.whereNull('d.locked_until').orWhere('d.locked_until', '<', trx.fn.now()))
      .orderByRaw('coalesce(a.busy, 0), a.served NULLS FIRST, d.updated_at')
      .first()
      .forUpdate('d')
      .skipLocked()) as DatasetRow | undefined;
    if (!row) return { kind: 'none' };
    if (row.attempts >= options.maxAttempts) {
      await trx('datasets')
        .where({ id: row.id })
        .update({ status: 'failed', error: giveUpMessage(options.maxAttempts), locked_until: null, updated_at: trx.fn.now() });
      return { kind: 'gave-up', id: row.id };
    }
    await trx('datasets')
      .where({ id: row.id })
      .update({ attempts: row.attempts + 1, locked_until: trx.raw(`now() + make_interval(secs => ?)`, [options.leaseSeconds]) });
    const job = { id: row.id, accountId: row.account_id, version: row.version, uploadKey: row.upload_key, format: row.upload_format, attempts: row.attempts + 1 };
    return { kind: 'claimed', job };
  });
}

/**
 * Marks the claimed version ready. Guarded by the version: a re-upload meanwhile bumped it, and
 * this stale result must not be served. Returns false when the guard discarded it.
 */
export async function completeJob(db: Knex, job: ClaimedJob, result: { rowCount: number; columns: SheetColumn[]; parquetKey: string }): Promise<boolean> {
  const updated = await pending(db, job).update({
    status: 'ready',
    error: null,
    row_count: result.rowCount,
    columns: JSON.stringify(result.columns),
    parquet_key: result.parquetKey,
    locked_until: null,
    updated_at: db.fn.now(),
  });
  return updated === 1;
}

/** Marks the claimed version failed with a user-safe message, under the same version guard. */
export async function failJob(db: Knex, job: ClaimedJob, message: string): Promise<boolean> {
  const updated = await pending(db, job).update({ status: 'failed', error: message, locked_until: null, updated_at: db.fn.now() });
  return updated === 1;
}

function pending(db: Knex, job: ClaimedJob) {
  return db('datasets').where({ id: job.id, version: job.version, status: 'processing' });
}
