/**
 * This pod's journal (DECISIONS §3 "Money survives any single fault"): every charge spent from a
 * credit lease that a response of this pod reported, kept in this process until PostgreSQL has
 * acknowledged it. Redis holds only what can be rebuilt from PostgreSQL (the wallet's spendable
 * credit, the holds, the window keys), so losing Redis loses no charge; a pod killed with SIGKILL
 * loses the charges of its last flush interval (`unacked`: the charges forgiven).
 *
 * A flush writes the journal as one statement (`LeaseBook.writeJournal`): the lookups of each
 * account and lease added to one aggregated `charge` row of this pod, lease and UTC day (its amount
 * and how many requests; the row grows with each flush, `journal-statement.ts`), a window
 * charge (a SQL result's, an export file's) as a row under its own key, as the window rules read
 * them. A batch keeps its row keys until it is acknowledged, so a retry after an ambiguous failure
 * is a no-op. A charge whose lease was settled before it arrived (another pod settled it) is charged
 * on the buckets instead, under its own key, or forgiven when the buckets cannot cover it. A window
 * key another pod wrote first (both spent it after Redis forgot the key) was reported twice: the
 * second is written under `<key>~<pod>`, a charge of its own, so the ledger holds what was reported.
 * The per-request records of the charges go to the usage log's outbox (`usage-outbox.ts`) in the
 * statement that writes their rows, so a SIGKILL loses no record of a charge that reached the
 * ledger. A charge PostgreSQL acknowledged outside that statement (late, again, charged directly)
 * has its record written by the next flush (`#extras`), whose retry writes no second row.
 */
import { randomUUID } from 'node:crypto';
import type { LeaseBook, JournalRow } from './leases.ts';
import type { Ledger } from './ledger.ts';
import type { UsageLog } from './usage-log.ts';
import { type OutboxWrite, type UsageRecord, usageRecord } from './usage-outbox.ts';
import type { JournalEntry, Written } from './types.ts';

export type { JournalEntry, Written } from './types.ts';

/** How many acknowledged charges the journal remembers for their refunds (a response breaks within seconds). */
const WRITTEN_MAX = 200_000;

export interface JournalOptions {
  readonly leases: LeaseBook;
  readonly ledger: Ledger;
  /** Where the records go; without one, no record is written (the outbox would grow with no reader). */
  readonly usage?: UsageLog;
  readonly onForgiven?: (chargeKey: string) => void;
}

interface Batch {
  readonly entries: JournalEntry[];
  readonly rows: JournalRow[];
  /** Row key → the entries it carries. */
  readonly members: Map<string, JournalEntry[]>;
  /** What the statement writes to the usage log's outbox (none without a usage log). */
  readonly outbox: OutboxWrite | undefined;
  /** Tries so far: a key found taken on the first is another pod's; on a retry, maybe this batch's own. */
  attempts: number;
}

export class Journal {
  readonly #o: JournalOptions;
  /** This process's name in the ledger's row keys: two pods never write the same aggregated key. */
  readonly #pod = randomUUID();
  #seq = 0;
  /** Charge key → entry not in a batch yet. */
  readonly #pending = new Map<string, JournalEntry>();
  /** Records of charges PostgreSQL acknowledged outside a flush statement, for the next flush to write. */
  #extras: UsageRecord[] = [];
  /** The batch being written (or that failed, kept with its row keys for the retry). */
  #batch: Batch | undefined;
  #flushing: Promise<Set<string>> | undefined;
  readonly #written = new Map<string, Written>();

  constructor(options: JournalOptions) {
    this.#o = options;
  }

  add(entry: JournalEntry): void {
    this.#pending.set(entry.key, entry);
  }

  /** Whether the key was charged by this pod and is not written yet. */
  has(key: string): boolean {
    return this.#pending.has(key) || Boolean(this.#batch?.entries.some((e) => e.key === key));
  }

  /** Takes back a charge not written yet: its entry; 'writing' while its batch is on its way; undefined when written or unknown. */
  cancel(key: string): JournalEntry | 'writing' | undefined {
    const entry = this.#pending.get(key);
    if (entry) {
      this.#pending.delete(key);
      return entry;
    }
    return this.#batch?.entries.some((e) => e.key === key) ? 'writing' : undefined;
  }

  /** Where a charge this pod wrote went (for its refund); undefined when unknown. */
  written(key: string): Written | undefined {
    return this.#written.get(key);
  }

  /** The charges this pod reported that PostgreSQL has not acknowledged: what a SIGKILL now forgives. */
  unacked(): JournalEntry[] {
    return [...(this.#batch?.entries ?? []), ...this.#pending.values()];
  }

  /** What this pod charged under the account's lease that PostgreSQL has not acknowledged: a readout counts it as spent. */
  unflushed(accountId: string, leaseId: string): number {
    return this.unacked().reduce((sum, e) => (e.accountId === accountId && e.leaseId === leaseId ? sum + e.amountMicro : sum), 0);
  }

  /** Writes the journal (one flush at a time); resolves with the accounts whose buckets a late charge moved. */
  async flush(): Promise<Set<string>> {
    while (this.#flushing) await this.#flushing.catch(() => undefined);
    if (!this.#batch && !this.#pending.size && !this.#extras.length) return new Set();
    this.#flushing = this.#writeAll();
    try {
      return await this.#flushing;
    } finally {
      this.#flushing = undefined;
    }
  }

  /** The batch, then the records of its late charges, so a flush leaves no record behind (the drain's). */
  async #writeAll(): Promise<Set<string>> {
    const lateAccounts = await this.#write();
    if (this.#extras.length) for (const accountId of await this.#write()) lateAccounts.add(accountId);
    return lateAccounts;
  }

  async #write(): Promise<Set<string>> {
    // A failed batch goes again with the same row keys, then what arrived since.
    const batch = (this.#batch ??= this.#nextBatch());
    const unwritten = await this.#o.leases.writeJournal(batch.rows, batch.outbox);
    const first = batch.attempts++ === 0;
    // `written` by the statement, their records with them; `outside` it (again, late): their records go with the next flush.
    const written: Written[] = [];
    const outside: Written[] = [];
    const lateAccounts = new Set<string>();
    for (const [rowKey, entries] of batch.members) {
      const status = unwritten.get(rowKey);
      if (status === 'taken' && first && entries[0]!.window) {
        outside.push(await this.#again(entries[0]!));
        continue;
      }
      if (status !== 'late') {
        for (const entry of entries) written.push({ entry, ledgerKey: rowKey, late: false, forgiven: false });
        continue;
      }
      for (const entry of entries) outside.push(await this.#late(entry, entry.key));
      lateAccounts.add(entries[0]!.accountId);
    }
    this.#batch = undefined;
    for (const item of [...written, ...outside]) this.#remember(item);
    this.#acknowledgedOutside(outside);
    return lateAccounts;
  }

  /** A charge PostgreSQL acknowledged outside the journal (charged directly while the wallet's store failed): its usage record. */
  directlyWritten(entry: JournalEntry): void {
    this.#acknowledgedOutside([{ entry, ledgerKey: entry.key, late: false, forgiven: false }]);
  }

  /** Charges already in the ledger (or forgiven) whose records the next flush writes. */
  #acknowledgedOutside(written: readonly Written[]): void {
    if (this.#o.usage) this.#extras.push(...written.map(usageRecord));
  }

  /** A charge whose lease settled before it arrived: on the buckets under `ledgerKey`, or forgiven. */
  async #late(entry: JournalEntry, ledgerKey: string): Promise<Written> {
    const { key, accountId, amountMicro, breakdown, requestId, queryId } = entry;
    const result = await this.#o.ledger.charge({ accountId, amountMicro, idempotencyKey: ledgerKey, breakdown, requestId, queryId });
    if (!result.ok) this.#o.onForgiven?.(key);
    return { entry, ledgerKey, late: true, forgiven: !result.ok };
  }

  /** A window charge whose key another pod wrote first: this pod's report is written as a charge of its own. */
  async #again(entry: JournalEntry): Promise<Written> {
    const ledgerKey = `${entry.key}~${this.#pod}`;
    const row = { ...this.#rows(new Map([[entry.key, [entry]]]), 0)[0]!, idempotency_key: ledgerKey };
    const late = (await this.#o.leases.writeJournal([row])).get(ledgerKey) === 'late';
    return late ? this.#late(entry, ledgerKey) : { entry, ledgerKey, late: false, forgiven: false };
  }

  #nextBatch(): Batch {
    const entries = [...this.#pending.values()];
    this.#pending.clear();
    const seq = this.#seq++;
    // A lookups row stands for a UTC day at most, so spend per day reads the rows' creation days.
    const day = new Date().toISOString().slice(0, 10);
    const members = new Map<string, JournalEntry[]>();
    const records: UsageRecord[] = [];
    for (const entry of entries) {
      const rowKey = entry.window ? entry.key : `lookups:${entry.accountId}:${entry.leaseId}:${this.#pod}:${day}`;
      const list = members.get(rowKey);
      if (list) list.push(entry);
      else members.set(rowKey, [entry]);
      if (this.#o.usage) records.push(usageRecord({ entry, ledgerKey: rowKey, late: false, forgiven: false }));
    }
    const extras = this.#extras;
    this.#extras = [];
    const outbox = this.#o.usage && { pod: this.#pod, flushKey: `${this.#pod}:${seq}`, records, extras };
    return { entries, rows: this.#rows(members, seq), members, outbox, attempts: 0 };
  }

  /** One ledger row per member: a flush's lookups of an account and lease summed (added to their row by flush `seq`), a window charge alone. */
  #rows(members: Map<string, JournalEntry[]>, seq: number): JournalRow[] {
    return [...members].map(([key, list]): JournalRow => {
      const first = list[0]!;
      const one = list.length === 1 ? first : undefined;
      return {
        idempotency_key: key,
        account_id: first.accountId,
        lease_id: first.leaseId,
        amount_micro: list.reduce((total, e) => total + e.amountMicro, 0),
        requests: list.length,
        breakdown: first.window ? (first.breakdown ?? []) : [],
        request_id: one?.requestId ?? null,
        query_id: first.window ? (first.queryId ?? null) : null,
        flush_seq: first.window ? null : seq,
      };
    });
  }

  #remember(item: Written): void {
    if (this.#written.size >= WRITTEN_MAX) this.#written.delete(this.#written.keys().next().value!);
    this.#written.set(item.entry.key, item);
  }
}
