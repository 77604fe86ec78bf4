/**
 * The two sides the usage-log invariants compare, read once the APIs have exited (a SIGTERM stores
 * the records waiting in PostgreSQL's outbox, any pod's, a killed pod's too): every `usage/` Parquet file of the run's bucket (the per-request log
 * `api/src/billing/usage-log.ts` writes), summed per account, and the ledger's charge rows and
 * refunds per account, with how many requests each charge row stands for (`requests`).
 */
import { buffer } from 'node:stream/consumers';
import { parquetReadObjects } from 'hyparquet';
import { onServer } from '@uda/api/bench/support';
import type { ObjectStore } from '@uda/shared/object-store';
import type { TimedRefund } from './faults.ts';
import type { ByAccount } from './reconcile.ts';

/** Amount (micro-USD) and request count per account id. */
export interface Tallied {
  readonly micro: ByAccount;
  readonly requests: ByAccount;
}

export interface UsageLogRead {
  readonly files: number;
  /** Every record: what the clients were told (a charge the buckets could not cover is still reported). */
  readonly all: Tallied;
  /** The records the ledger carries: all but those marked `forgiven`. */
  readonly charged: Tallied;
  readonly forgivenRecords: number;
  /** The ledger rows the charged records name (`ledger_key`). */
  readonly ledgerKeys: ReadonlySet<string>;
}

export interface LedgerCharges {
  /** `kind = 'charge'` rows: Σ amount and Σ requests. */
  readonly charges: Tallied;
  /** `kind = 'refund'` rows, as a positive amount. */
  readonly refundsMicro: ByAccount;
  /** Every charge row's key and amount, to name the rows no usage record stands for. */
  readonly rows: readonly { readonly key: string; readonly micro: number }[];
}

/** Charge rows of the ledger that no usage record names (none, unless the outbox was left unstored or records were lost). */
export function rowsWithoutRecords(ledger: LedgerCharges, usageLog: UsageLogRead): { rows: number; micro: number; keys: string[] } {
  const missing = ledger.rows.filter((row) => !usageLog.ledgerKeys.has(row.key));
  return { rows: missing.length, micro: missing.reduce((n, row) => n + row.micro, 0), keys: missing.map((row) => row.key) };
}

const USAGE_PREFIX = 'usage/';

export async function readUsageLog(store: ObjectStore): Promise<UsageLogRead> {
  const files = (await store.list(USAGE_PREFIX)).filter((o) => o.key.endsWith('.parquet'));
  const all = newTallied();
  const charged = newTallied();
  let forgivenRecords = 0;
  const ledgerKeys = new Set<string>();
  for (const file of files) {
    const object = await store.get(file.key);
    if (!object) throw new Error(`usage log file ${file.key} listed but gone`);
    const bytes = await buffer(object.body);
    const data = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    const rows = await parquetReadObjects({ file: data, columns: ['account_id', 'cost_micro', 'ledger_key', 'forgiven'] });
    for (const row of rows) {
      const [account, cost] = [String(row.account_id), Number(row.cost_micro)];
      add(all, account, cost);
      if (row.forgiven === true) forgivenRecords++;
      else {
        add(charged, account, cost);
        ledgerKeys.add(String(row.ledger_key));
      }
    }
  }
  return { files: files.length, all, charged, forgivenRecords, ledgerKeys };
}

export async function readLedgerCharges(databaseUrl: string): Promise<LedgerCharges> {
  const rows = await onServer<{ account_id: string; charged: string; requests: string; refunded: string }>(
    databaseUrl,
    `SELECT account_id,
            coalesce(sum(amount_micro) FILTER (WHERE kind = 'charge'), 0) AS charged,
            coalesce(sum(requests) FILTER (WHERE kind = 'charge'), 0) AS requests,
            coalesce(-sum(amount_micro) FILTER (WHERE kind = 'refund'), 0) AS refunded
     FROM ledger WHERE kind IN ('charge', 'refund') GROUP BY account_id`,
  );
  const charges = await onServer<{ idempotency_key: string; amount_micro: string }>(databaseUrl, `SELECT idempotency_key, amount_micro FROM ledger WHERE kind = 'charge'`);
  return {
    rows: charges.map((r) => ({ key: r.idempotency_key, micro: Number(r.amount_micro) })),
    charges: { micro: new Map(rows.map((r) => [r.account_id, Number(r.charged)])), requests: new Map(rows.map((r) => [r.account_id, Number(r.requests)])) },
    refundsMicro: new Map(rows.map((r) => [r.account_id, Number(r.refunded)])),
  };
}

/** Every window charge's refund with its charge's time (a lookup's is under its aggregated row's key, not its own: left out). */
export async function readTimedRefunds(databaseUrl: string): Promise<TimedRefund[]> {
  const rows = await onServer<{ account_id: string; micro: string; charged_ms: string; refunded_ms: string }>(
    databaseUrl,
    `SELECT r.account_id, -r.amount_micro AS micro, extract(epoch FROM c.created_at) * 1000 AS charged_ms, extract(epoch FROM r.created_at) * 1000 AS refunded_ms
     FROM ledger r JOIN ledger c ON c.idempotency_key = substring(r.idempotency_key FROM 8) AND c.kind = 'charge'
     WHERE r.kind = 'refund' AND r.idempotency_key LIKE 'refund:%'`,
  );
  return rows.map((r) => ({ accountId: r.account_id, micro: Number(r.micro), chargedAtMs: Number(r.charged_ms), refundedAtMs: Number(r.refunded_ms) }));
}

/** What the clients were told net of refunds, as the usage log sees it: its records less the ledger's refunds. */
export function netOfRefunds(usageLog: ByAccount, refundsMicro: ByAccount): Map<string, number> {
  const net = new Map(usageLog);
  for (const [account, refunded] of refundsMicro) net.set(account, (net.get(account) ?? 0) - refunded);
  return net;
}

function newTallied(): { micro: Map<string, number>; requests: Map<string, number> } {
  return { micro: new Map(), requests: new Map() };
}

function add(tallied: ReturnType<typeof newTallied>, account: string, cost: number): void {
  tallied.micro.set(account, (tallied.micro.get(account) ?? 0) + cost);
  tallied.requests.set(account, (tallied.requests.get(account) ?? 0) + 1);
}
