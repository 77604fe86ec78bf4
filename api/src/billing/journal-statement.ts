/**
 * A journal flush (`journal.ts`) in one statement: its ledger rows under their leases, and the
 * usage records of the rows it inserted in the usage log's outbox (`usage-outbox.ts`), so both
 * commit together or not at all.
 *
 * A lookups row (one per pod, lease and UTC day) is added to by each flush that carries its lookups:
 * the row keeps the last flush's `flush_seq`, and a flush no newer than it adds nothing, so the retry
 * of a flush whose answer was lost is a no-op. A window charge's row (no `flush_seq`) is written
 * once. So the ledger grows by one row per lease a pod spends from in a day, not per flush.
 *
 * Its rows move no bucket: the lease already took their money. A row is written only under a lease
 * still open, which it locks (FOR SHARE) so a settlement counts it or runs first. The statement
 * answers the rows it did not write: `late` (their lease had settled, and no earlier attempt of this
 * flush wrote them: a lookups row written by an earlier flush is not this one's; the journal charges
 * them on the buckets) and `taken` (the key was in the ledger already and nothing was added: this batch's earlier attempt,
 * or another pod's charge of the same window key after Redis forgot the key). A row not inserted now
 * has no record written now either: a retry writes no record twice.
 */
import type { Db } from '../db/index.ts';
import { OUTBOX_INSERT, type OutboxWrite, outboxBindings } from './usage-outbox.ts';

const WRITE_JOURNAL_SQL = `
WITH r AS (
  SELECT * FROM jsonb_to_recordset(?::jsonb) AS r(idempotency_key text, account_id uuid, lease_id uuid, amount_micro bigint, requests int, breakdown jsonb, request_id text, query_id text, flush_seq bigint)
), open AS (
  SELECT id FROM credit_leases WHERE id IN (SELECT lease_id FROM r) AND settled_at IS NULL FOR SHARE
), ins AS (
  INSERT INTO ledger (account_id, idempotency_key, kind, amount_micro, grant_micro, topoff_micro, period, breakdown, request_id, query_id, lease_id, requests, flush_seq)
  SELECT r.account_id, r.idempotency_key, 'charge', r.amount_micro, 0, 0, ?, r.breakdown, r.request_id, r.query_id, r.lease_id, r.requests, r.flush_seq
  FROM r JOIN open ON open.id = r.lease_id
  ON CONFLICT (idempotency_key) DO UPDATE
    SET amount_micro = ledger.amount_micro + excluded.amount_micro, requests = ledger.requests + excluded.requests, request_id = NULL, flush_seq = excluded.flush_seq
    WHERE ledger.flush_seq < excluded.flush_seq
  RETURNING idempotency_key
), ${OUTBOX_INSERT}
SELECT r.idempotency_key AS key, CASE WHEN r.lease_id IN (SELECT id FROM open) THEN 'taken' ELSE 'late' END AS status FROM r
WHERE NOT EXISTS (SELECT 1 FROM ins WHERE ins.idempotency_key = r.idempotency_key)
  AND (r.lease_id IN (SELECT id FROM open) OR NOT EXISTS (SELECT 1 FROM ledger l WHERE l.idempotency_key = r.idempotency_key AND l.flush_seq IS NOT DISTINCT FROM r.flush_seq))`;

/** One ledger row a journal flush writes (`journal.ts`). */
export interface JournalRow {
  readonly idempotency_key: string;
  readonly account_id: string;
  readonly lease_id: string;
  readonly amount_micro: number;
  readonly requests: number;
  readonly breakdown: unknown;
  readonly request_id: string | null;
  readonly query_id: string | null;
  /** The flush that carries a lookups row (`journal.ts`); null for a window charge's row. */
  readonly flush_seq: number | null;
}

/** Writes a journal batch (and its usage records, when given) in period `period`; answers the rows it did not write, and why. */
export async function writeJournal(db: Db, rows: readonly JournalRow[], period: string, outbox?: OutboxWrite): Promise<Map<string, 'late' | 'taken'>> {
  if (!rows.length && !outbox?.extras.length) return new Map();
  const result = await db.raw<{ rows: { key: string; status: 'late' | 'taken' }[] }>(WRITE_JOURNAL_SQL, [JSON.stringify(rows), period, ...outboxBindings(outbox)]);
  return new Map(result.rows.map((r) => [r.key, r.status]));
}
