/**
 * The usage log's outbox in PostgreSQL (DECISIONS §3 "The ledger is aggregated"): where a charge's
 * per-request record waits for its Parquet file. A journal flush writes the records of the ledger
 * rows its statement inserted, in that same statement (`OUTBOX_INSERT`, one `usage_outbox` row per
 * flush), so a charge is in the ledger exactly when its record is durable: a SIGKILL loses no
 * record of a charge that reached the ledger. The store (`usage-log.ts`, any pod) claims rows under
 * a file name in a committed transaction, puts the file, then deletes the rows; a claim older than
 * the stale age (its pod died before deleting) is put again under the same name, which overwrites
 * what may already be there, so each record is in the bucket once.
 */
import type { Db } from '../db/index.ts';
import type { Written } from './types.ts';

/** One paid request's record, as the outbox holds it (JSON) and the Parquet file's columns name it. */
export interface UsageRecord {
  readonly at: number;
  readonly account_id: string;
  readonly key_id: string | null;
  readonly request_id: string | null;
  readonly route: string | null;
  readonly source: string | null;
  readonly rows: number | null;
  readonly cost_micro: number;
  readonly charge_key: string;
  readonly ledger_key: string;
  readonly forgiven: boolean;
}

export function usageRecord({ entry, ledgerKey, forgiven }: Written): UsageRecord {
  const sources = entry.breakdown ?? [];
  return {
    at: entry.at,
    account_id: entry.accountId,
    key_id: entry.keyId ?? null,
    request_id: entry.requestId ?? null,
    route: entry.route ?? null,
    source: sources.length ? sources.map((item) => item.source).join(',') : null,
    rows: sources.length ? sources.reduce((total, item) => total + item.rows, 0) : null,
    cost_micro: entry.amountMicro,
    charge_key: entry.key,
    ledger_key: ledgerKey,
    forgiven,
  };
}

/** What a journal flush writes to the outbox besides its ledger rows. */
export interface OutboxWrite {
  readonly pod: string;
  /** The flush's own key: its retry after an ambiguous failure inserts no second row. */
  readonly flushKey: string;
  /** The records of the statement's ledger rows: each written only if its `ledger_key` row was inserted now. */
  readonly records: readonly UsageRecord[];
  /** Records of charges PostgreSQL acknowledged outside a flush statement (late, again, direct): written as they are. */
  readonly extras: readonly UsageRecord[];
}

/**
 * A CTE of the journal statement (`journal-statement.ts`), after its `ins` CTE (the ledger rows
 * inserted, by `idempotency_key`): one outbox row with the records of those rows and the extras,
 * none when there are no records. Bindings: `outboxBindings`.
 */
export const OUTBOX_INSERT = `
outbox AS (
  INSERT INTO usage_outbox (pod, flush_key, records)
  SELECT ?, ?, jsonb_agg(rec) FROM (
    SELECT rec FROM jsonb_array_elements(?::jsonb) AS e(rec) WHERE rec->>'ledger_key' IN (SELECT idempotency_key FROM ins)
    UNION ALL SELECT rec FROM jsonb_array_elements(?::jsonb) AS e(rec)
  ) records HAVING count(*) > 0
  ON CONFLICT (flush_key) DO NOTHING
)`;

export function outboxBindings(write: OutboxWrite | undefined): (string | null)[] {
  return [write?.pod ?? '', write?.flushKey ?? '', JSON.stringify(write?.records ?? []), JSON.stringify(write?.extras ?? [])];
}

/** A file's records, oldest flush first. */
export interface ClaimedFile {
  readonly file: string;
  readonly records: UsageRecord[];
  /** How many outbox rows (flushes) they came from. */
  readonly flushes: number;
}

interface OutboxRow {
  id: string;
  file: string;
  records: UsageRecord[];
}

function claimed(file: string, rows: OutboxRow[]): ClaimedFile {
  const records = rows.sort((a, b) => Number(a.id) - Number(b.id)).flatMap((row) => row.records);
  return { file, records, flushes: rows.length };
}

// Each statement commits on its own: a claim is visible to every other pod before its file is put.
const CLAIM_SQL = `
UPDATE usage_outbox SET file = ?, claimed_at = now()
WHERE id IN (SELECT id FROM usage_outbox WHERE file IS NULL ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED)
RETURNING id, file, records`;

// Takes over one file claimed more than `staleMs` ago (its store died between claim and delete):
// its claim is renewed, so one pod at a time puts it again.
const RECLAIM_STALE_SQL = `
UPDATE usage_outbox SET claimed_at = now()
WHERE file = (SELECT file FROM usage_outbox WHERE file IS NOT NULL AND claimed_at < now() - ?::bigint * interval '1 millisecond' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING id, file, records`;

/** The store's side of the outbox: claim, take over stale claims, delete what was stored. */
export class UsageOutbox {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /** Claims up to `limit` unclaimed rows, any pod's, for `file`; their records (none: nothing waits). */
  async claim(file: string, limit: number): Promise<ClaimedFile> {
    const result = await this.#db.raw<{ rows: OutboxRow[] }>(CLAIM_SQL, [file, limit]);
    return claimed(file, result.rows);
  }

  /** A file claimed more than `staleMs` ago and never deleted, now claimed by the caller. */
  async reclaimStale(staleMs: number): Promise<ClaimedFile | undefined> {
    const result = await this.#db.raw<{ rows: OutboxRow[] }>(RECLAIM_STALE_SQL, [staleMs]);
    const file = result.rows[0]?.file;
    return file === undefined ? undefined : claimed(file, result.rows);
  }

  /** The rows still claimed under `file` (this pod's claim whose put failed), claimed anew; undefined when none is left. */
  async reclaim(file: string): Promise<ClaimedFile | undefined> {
    const result = await this.#db.raw<{ rows: OutboxRow[] }>(`UPDATE usage_outbox SET claimed_at = now() WHERE file = ? RETURNING id, file, records`, [file]);
    return result.rows.length ? claimed(file, result.rows) : undefined;
  }

  /** Deletes the rows of a file once it is in the bucket. */
  async remove(file: string): Promise<void> {
    await this.#db('usage_outbox').where({ file }).delete();
  }
}
