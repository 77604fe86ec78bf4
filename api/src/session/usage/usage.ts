/**
 * The usage and credit page's figures (DECISIONS §3, §4): balance and its buckets, the next monthly
 * reset, today's daily-cap counts, the ledger (newest first, paged) and this month's spend per day
 * per source. Read-only queries on the `ledger` table that the metering code writes; only its
 * charges and refunds are the caller's spending (a credit lease and its return only move credit
 * between the buckets and the lease, see billing/leases.ts).
 */
import type { Db } from '../../db/index.ts';
import { type DailyCapOptions, dailyCapRemaining } from '../../middleware/daily-cap/index.ts';
import type { AccountStore } from '../../accounts/store.ts';
import type { Billing } from '../../billing/index.ts';
import type { Limits } from '../../limits.ts';
import type { UsageSummary } from './usage-schema.ts';

export const LEDGER_PAGE_SIZE = 20;
/** The ledger rows that are the caller's spending. */
const SPENDING = ['charge', 'refund'];

export interface LedgerEntry {
  kind: 'charge' | 'refund';
  amount_micro: number;
  breakdown: { source: string; rows: number; costMicro: number }[];
  query_id: string | null;
  created_at: string;
}

export function nextMonthlyReset(now: Date): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
}

/** What the usage figures are read from. */
export interface UsageDeps {
  readonly db: Db;
  readonly accounts: AccountStore;
  readonly billing: Pick<Billing, 'readout'>;
  readonly limits: Limits;
  readonly guards: { readonly exportCapOptions: DailyCapOptions; readonly sheetCapOptions: DailyCapOptions };
}

export async function usageSummary(deps: UsageDeps, accountId: string, now = new Date()): Promise<UsageSummary> {
  const { accounts, billing, guards, limits } = deps;
  const account = await accounts.mustGet(accountId);
  // DECISIONS §3 "One balance": the same readout as X-Credits-Remaining and admin `account show`.
  const balance = await billing.readout(accountId);
  const exportLeft = await dailyCapRemaining(guards.exportCapOptions, accountId);
  const sheetLeft = await dailyCapRemaining(guards.sheetCapOptions, accountId);
  return {
    tier: account.tier,
    balance_micro: balance.balanceMicro,
    grant_micro: balance.grantMicro,
    topoff_micro: balance.topoffMicro,
    next_reset: nextMonthlyReset(now),
    today: {
      export_sql: { used: limits.exportDaily - exportLeft, limit: limits.exportDaily },
      sheets: { used: limits.sheetDaily - sheetLeft, limit: limits.sheetDaily },
    },
    spend_by_day: await spendByDay(deps.db, accountId, now),
  };
}

export async function ledgerPage(db: Db, accountId: string, page: number): Promise<{ entries: LedgerEntry[]; page: number; has_more: boolean }> {
  const rows = await db('ledger')
    .where({ account_id: accountId })
    .whereIn('kind', SPENDING)
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .offset(page * LEDGER_PAGE_SIZE)
    .limit(LEDGER_PAGE_SIZE + 1)
    .select('kind', 'amount_micro', 'breakdown', 'query_id', 'created_at');
  return {
    entries: rows.slice(0, LEDGER_PAGE_SIZE).map((r) => ({
      kind: r.kind,
      amount_micro: Number(r.amount_micro),
      breakdown: parseBreakdown(r.breakdown),
      query_id: r.query_id,
      created_at: new Date(r.created_at).toISOString(),
    })),
    page,
    has_more: rows.length > LEDGER_PAGE_SIZE,
  };
}

/**
 * Charges per UTC day and source this month, net of refunds: a refund reverses its whole charge,
 * so it takes each source's part back on the day of the refund.
 */
async function spendByDay(db: Db, accountId: string, now: Date): Promise<UsageSummary['spend_by_day']> {
  const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const rows = await db('ledger')
    .where({ account_id: accountId })
    .whereIn('kind', SPENDING)
    .andWhere('created_at', '>=', monthStart)
    .select('kind', 'idempotency_key', 'amount_micro', 'breakdown', 'created_at');
  const refundedKeys = rows.filter((r) => r.kind === 'refund').map((r) => String(r.idempotency_key).replace(/^refund:/, ''));
  const charges = new Map<string, unknown>(
    refundedKeys.length
      ? (await db('ledger').whereIn('idempotency_key', refundedKeys).select('idempotency_key', 'breakdown')).map((r) => [r.idempotency_key, r.breakdown])
      : [],
  );
  const totals = new Map<string, number>();
  for (const row of rows) {
    const day = new Date(row.created_at).toISOString().slice(0, 10);
    const sign = row.kind === 'refund' ? -1 : 1;
    const breakdown = row.kind === 'refund' ? charges.get(String(row.idempotency_key).replace(/^refund:/, '')) : row.breakdown;
    for (const item of parseBreakdown(breakdown)) {
      const key = `${day}|${item.source}`;
      totals.set(key, (totals.get(key) ?? 0) + sign * item.costMicro);
    }
  }
  return [...totals]
    .map(([key, cost]) => {
      const [day = '', source = ''] = key.split('|');
      return { day, source, cost_micro: cost };
    })
    .sort((a, b) => a.day.localeCompare(b.day) || a.source.localeCompare(b.source));
}

function parseBreakdown(value: unknown): LedgerEntry['breakdown'] {
  const list = typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
  if (!Array.isArray(list)) return [];
  return list.map((item: { source?: unknown; rows?: unknown; costMicro?: unknown }) => ({
    source: String(item.source ?? ''),
    rows: Number(item.rows ?? 0),
    costMicro: Number(item.costMicro ?? 0),
  }));
}
