/**
 * The usage log (DECISIONS §3 "The ledger is aggregated"): one record per paid request, appended
 * to the bucket under `usage/` as Parquet files each pod writes in batches, that DuckDB (and any
 * Parquet reader) reads. The ledger holds one row per account, lease and flush for lookups; this
 * log says which requests made it up: request id, key id, route, sources, rows, cost, charge key,
 * and the ledger row that carries the charge (`ledger_key`; a forgiven charge says so).
 *
 * Records arrive once PostgreSQL acknowledged their charge (`journal.ts`). The pod keeps them in
 * memory until their file is stored (a failed store keeps them for the next), and a SIGTERM stores
 * them (`Billing.drain`). Files live `retentionDays` (USAGE_LOG_RETENTION_DAYS, 35 by default):
 * `prune` deletes the days past it. Files are named `usage/<UTC day>/<pod>-<seq>.parquet`.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ParquetColumn, writeParquetRows } from '@uda/shared/duckdb';
import type { ObjectStore } from '@uda/shared/object-store';
import type { Written } from './types.ts';

export const USAGE_PREFIX = 'usage/';
const DAY_MS = 86_400_000;

/** The file's columns, in order (`usageRow`). */
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

function usageRow({ entry, ledgerKey, forgiven }: Written): (string | number | boolean | null)[] {
  const sources = entry.breakdown ?? [];
  const source = sources.length ? sources.map((item) => item.source).join(',') : null;
  const rows = sources.length ? sources.reduce((total, item) => total + item.rows, 0) : null;
  return [entry.at, entry.accountId, entry.keyId ?? null, entry.requestId ?? null, entry.route ?? null, source, rows, entry.amountMicro, entry.key, ledgerKey, forgiven];
}

export interface UsageLogOptions {
  readonly store: ObjectStore;
  readonly retentionDays: number;
  /** This pod's name in its files' names (default: a fresh id per process). */
  readonly pod?: string;
  /** A file is stored once this many records wait, or at the next `store` (the loop's, the drain's). */
  readonly batchRecords?: number;
  readonly now?: () => number;
}

export class UsageLog {
  readonly #o: UsageLogOptions;
  readonly #pod: string;
  #seq = 0;
  #buffer: Written[] = [];
  #storing: Promise<void> | undefined;

  constructor(options: UsageLogOptions) {
    this.#o = options;
    this.#pod = options.pod ?? randomUUID();
  }

  /** Records whose charge PostgreSQL acknowledged; stored in a batch. */
  append(written: readonly Written[]): void {
    this.#buffer.push(...written);
    if (this.#buffer.length >= (this.#o.batchRecords ?? 50_000)) void this.store().catch(() => undefined);
  }

  /** How many records wait for their file. */
  get waiting(): number {
    return this.#buffer.length;
  }

  /** Stores the waiting records as one file (one store at a time); a failure keeps them for the next. */
  async store(): Promise<void> {
    while (this.#storing) await this.#storing.catch(() => undefined);
    if (!this.#buffer.length) return;
    this.#storing = this.#storeNow();
    try {
      await this.#storing;
    } finally {
      this.#storing = undefined;
    }
  }

  async #storeNow(): Promise<void> {
    const batch = this.#buffer;
    this.#buffer = [];
    const dir = await mkdtemp(join(tmpdir(), 'uda-usage-'));
    try {
      const path = join(dir, 'usage.parquet');
      await writeParquetRows(path, USAGE_COLUMNS, batch.map(usageRow));
      const day = new Date(this.#now()).toISOString().slice(0, 10);
      await this.#o.store.putFile(`${USAGE_PREFIX}${day}/${this.#pod}-${String(this.#seq++).padStart(6, '0')}.parquet`, path, { contentType: 'application/vnd.apache.parquet' });
    } catch (error) {
      this.#buffer = [...batch, ...this.#buffer];
      throw error;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
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
