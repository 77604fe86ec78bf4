/**
 * The usage log (DECISIONS §3 "The ledger is aggregated"): one record per paid request, in the
 * bucket under `usage/` as Parquet files that DuckDB (and any Parquet reader) reads. The ledger
 * holds one row per account, lease and flush for lookups; this log says which requests made it up:
 * request id, key id, route, sources, rows, cost, charge key, and the ledger row that carries the
 * charge (`ledger_key`; a forgiven charge says so).
 *
 * A record is durable from the moment its charge is: the journal's flush writes it to PostgreSQL's
 * outbox in the statement that writes the charge (`usage-outbox.ts`, one row per flush). `store`
 * (every ~10 s and on SIGTERM, `Billing.drain`) moves the outbox's rows, any pod's, to files: so a
 * pod killed with SIGKILL leaves its records for the others to store. Files live `retentionDays`
 * (USAGE_LOG_RETENTION_DAYS, 35 by default): `prune` deletes the days past it. Files are named
 * `usage/<UTC day>/<storing pod>-<uuid>.parquet`.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ParquetColumn, writeParquetRows } from '@uda/shared/duckdb';
import type { ObjectStore } from '@uda/shared/object-store';
import type { Db } from '../db/index.ts';
import { type ClaimedFile, type UsageRecord, UsageOutbox } from './usage-outbox.ts';

export const USAGE_PREFIX = 'usage/';
const DAY_MS = 86_400_000;
/** A claim this old was left by a store that died before deleting its rows: another store puts its file again. */
const STALE_CLAIM_MS = 60_000;
/** At most this many outbox rows (flushes) go in one file. */
const FILE_FLUSHES = 2_000;

/** The file's columns, in order (a `UsageRecord`'s fields). */
export const USAGE_COLUMNS: readonly ParquetColumn[] = [
  { name: 'at', type: 'TIMESTAMP_MS' },
  { name: 'account_id', type: 'VARCHAR' },
  { name: 'key_id', type: 'VARCHAR' },
  { name: 'request_id', type: 'VARCHAR' },
  { name: 'route', type: 'VARCHAR' },
  { name: 'source', type: 'VARCHAR' },
  { name: 'rows', type: 'BIGINT' },
  { name: 'cost_micro', type: 'BIGINT' },
  { name: 'charge_key', type: 'VARCHAR' },
  { name: 'ledger_key', type: 'VARCHAR' },
  { name: 'forgiven', type: 'BOOLEAN' },
];

function usageRow(record: UsageRecord): (string | number | boolean | null)[] {
  return USAGE_COLUMNS.map((column) => record[column.name as keyof UsageRecord]);
}

export interface UsageLogOptions {
  readonly store: ObjectStore;
  /** Where the outbox is (the ledger's database). */
  readonly db: Db;
  readonly retentionDays: number;
  /** This pod's name in the names of the files it stores (default: a fresh id per process). */
  readonly pod?: string;
  /** How old a claim is before another store takes it over (tests shorten it). */
  readonly staleClaimMs?: number;
  readonly now?: () => number;
}

export class UsageLog {
  readonly #o: UsageLogOptions;
  readonly #pod: string;
  readonly #outbox: UsageOutbox;
  /** Files this pod claimed whose put failed (the bucket was down): its next store puts them again, under their names. */
  readonly #failed = new Set<string>();
  #storing: Promise<void> | undefined;

  constructor(options: UsageLogOptions) {
    this.#o = options;
    this.#pod = options.pod ?? randomUUID();
    this.#outbox = new UsageOutbox(options.db);
  }

  /**
   * Stores the outbox's records as files (one store at a time in this pod): first the files whose
   * store died between its claim and its delete, again under their names, then what no store has
   * claimed. A failed put keeps its claim: this pod's next store (or its drain) puts it again at
   * once, and any pod takes it over once stale should this one die first.
   */
  async store(): Promise<void> {
    while (this.#storing) await this.#storing.catch(() => undefined);
    this.#storing = this.#storeNow();
    try {
      await this.#storing;
    } finally {
      this.#storing = undefined;
    }
  }

  async #storeNow(): Promise<void> {
    for (const file of [...this.#failed]) {
      const again = await this.#outbox.reclaim(file);
      if (again) await this.#put(again);
      else this.#failed.delete(file);
    }
    for (let stale; (stale = await this.#outbox.reclaimStale(this.#o.staleClaimMs ?? STALE_CLAIM_MS)); ) await this.#put(stale);
    // A full file means more may wait; a short one took everything (what arrives meanwhile waits for the next store).
    for (let full = true; full; ) {
      const claimed = await this.#outbox.claim(this.#fileName(), FILE_FLUSHES);
      if (claimed.flushes) await this.#put(claimed);
      full = claimed.flushes === FILE_FLUSHES;
    }
  }

  /** Puts the file (overwriting a copy a dead store may have put), then deletes its rows. */
  async #put({ file, records }: ClaimedFile): Promise<void> {
    const dir = await mkdtemp(join(tmpdir(), 'uda-usage-'));
    try {
      const path = join(dir, 'usage.parquet');
      await writeParquetRows(path, USAGE_COLUMNS, records.map(usageRow));
      await this.#o.store.putFile(file, path, { contentType: 'application/vnd.apache.parquet' });
    } catch (error) {
      this.#failed.add(file);
      throw error;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    await this.#outbox.remove(file);
    this.#failed.delete(file);
  }

  #fileName(): string {
    const day = new Date(this.#now()).toISOString().slice(0, 10);
    return `${USAGE_PREFIX}${day}/${this.#pod}-${randomUUID()}.parquet`;
  }

  /** Deletes the days older than the retention (any pod may run it; deleting twice is harmless). */
  async prune(): Promise<number> {
    const oldest = new Date(this.#now() - this.#o.retentionDays * DAY_MS).toISOString().slice(0, 10);
    const expired = (await this.#o.store.list(USAGE_PREFIX)).filter((o) => o.key.slice(USAGE_PREFIX.length, USAGE_PREFIX.length + 10) < oldest).map((o) => o.key);
    if (expired.length) await this.#o.store.delete(expired);
    return expired.length;
  }

  #now(): number {
    return (this.#o.now ?? Date.now)();
  }
}
