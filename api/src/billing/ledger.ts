/**
 * The credits ledger (DECISIONS §3): every charge and refund is a row with a unique, server-minted
 * idempotency key, and the account's buckets move in the same statement or transaction.
 *
 * Charges are group-committed per account: concurrent charges for one account queue in this
 * process while a charge for that account is in flight, and the next transaction takes them all
 * (a lone charge is a single statement, see CHARGE_SQL). Each transaction locks the account row
 * (FOR UPDATE, so pods serialise), applies the lazy monthly reset, skips idempotency keys already in
 * the ledger, accepts charges in arrival order while the balance covers them (grant first, then
 * top-off), and writes their ledger rows and the new balance together. A caller's promise resolves
 * only after its transaction commits, so nothing is acknowledged that could be lost, and the unique
 * idempotency key makes a retry a no-op. The CHECK constraints make a negative balance impossible
 * even if this code were wrong.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/index.ts';
import { type AccountRow, type AccountStore, AccountNotFound, accountFromRow } from '../accounts/store.ts';
import { periodOf, splitCharge } from '../money.ts';
import { type WindowSpec, refundKey, windowChargeKey } from './charge-keys.ts';
import { MONTHLY_GRANT_MICRO_USD } from '../prices.ts';
import type { BreakdownItem, Buckets } from './types.ts';

export type { BreakdownItem } from './types.ts';

export interface ChargeRequest {
  readonly accountId: string;
  readonly amountMicro: number;
  readonly idempotencyKey: string;
  readonly breakdown?: readonly BreakdownItem[];
  readonly requestId?: string;
  readonly queryId?: string;
}

export type ChargeResult =
  | {
      readonly ok: true;
      readonly chargedMicro: number;
      readonly balanceMicro: number;
      readonly duplicate: boolean;
      /** The buckets and their version as this charge's own statement left them (a lone new charge only). */
      readonly buckets?: Buckets;
    }
  | { readonly ok: false; readonly balanceMicro: number };


// `CASE tier …` mirrors MONTHLY_GRANT_MICRO_USD; `effectiveGrant` is its unit-tested twin.
const grantSql = (alias: string) =>
  `CASE WHEN ${alias}period = ?::text THEN ${alias}grant_micro ELSE CASE ${alias}tier WHEN 'free' THEN ?::bigint WHEN 'developer' THEN ?::bigint ELSE ?::bigint END END`;
const grantBindings = (period: string) => [
  period,
  MONTHLY_GRANT_MICRO_USD.free,
  MONTHLY_GRANT_MICRO_USD.developer,
  MONTHLY_GRANT_MICRO_USD.pro,
];

// Both ledger statements end alike: the buckets lose what the inserted row took (a refund row holds
// negative parts), and nothing changes when the insert hit an existing idempotency key.
const APPLY_LEDGER_ROW = `
UPDATE accounts a SET grant_micro = cur.g - ins.grant_micro, topoff_micro = cur.t - ins.topoff_micro,
  period = ?, updated_at = now()
FROM cur, ins WHERE a.id = cur.id
RETURNING a.grant_micro, a.topoff_micro, a.balance_version`;

// A lone charge (the common case when an account has one request in flight) is one statement:
// one round trip instead of a six-step transaction. It locks the row, applies the lazy reset,
// spends grant then top-off, and inserts the ledger row under its idempotency key — or does nothing.
const CHARGE_SQL = `
WITH cur AS (
  SELECT id, ${grantSql('')} AS g, topoff_micro AS t FROM accounts WHERE id = ? FOR UPDATE
), ins AS (
  INSERT INTO ledger (account_id, idempotency_key, kind, amount_micro, grant_micro, topoff_micro, period, breakdown, request_id, query_id)
  SELECT id, ?, 'charge', ?::bigint, LEAST(g, ?::bigint), ?::bigint - LEAST(g, ?::bigint), ?, CAST(? AS jsonb), ?, ?
  FROM cur WHERE g + t >= ?::bigint
  ON CONFLICT (idempotency_key) DO NOTHING
  RETURNING account_id, grant_micro, topoff_micro
)
${APPLY_LEDGER_ROW}`;

// A refund returns each part to the bucket it came from; a grant part from an earlier month
// goes to the top-off, because that month's grant has been reset since. A lookup spent under a
// credit lease has no parts (the lease took the money): its refund row carries the lease and
// moves no bucket, and the lease returns the amount (`leases.ts`).
const REFUND_SQL = `
WITH ch AS (
  SELECT account_id, amount_micro, grant_micro, topoff_micro, period, query_id, lease_id FROM ledger
  WHERE idempotency_key = ? AND kind = 'charge' AND (lease_id IS NOT NULL) = ?::boolean
), cur AS (
  SELECT a.id, ${grantSql('a.')} AS g,
    a.topoff_micro AS t
  FROM accounts a JOIN ch ON a.id = ch.account_id FOR UPDATE OF a
), ins AS (
  INSERT INTO ledger (account_id, idempotency_key, kind, amount_micro, grant_micro, topoff_micro, period, request_id, query_id, lease_id)
  SELECT ch.account_id, ?, 'refund', -ch.amount_micro,
    CASE WHEN ch.period = ? THEN -ch.grant_micro ELSE 0 END,
    CASE WHEN ch.period = ? THEN -ch.topoff_micro ELSE -(ch.grant_micro + ch.topoff_micro) END,
    ?, ?, ch.query_id, ch.lease_id
  FROM ch
  ON CONFLICT (idempotency_key) DO NOTHING
  RETURNING account_id, grant_micro, topoff_micro
)
${APPLY_LEDGER_ROW}`;

interface Pending {
  request: ChargeRequest;
  resolve(result: ChargeResult): void;
  reject(error: unknown): void;
}

const MAX_BATCH = 500;

/** The charge a window stands on now, or the key its next charge takes. */
export interface WindowCharge {
  readonly key: string;
  /** A standing (not refunded, not expired) charge exists under `key`: the window is paid. */
  readonly paid: boolean;
}

// The newest charge under a window base, whether it was refunded or has aged out, and how many
// charges the base has had (the next one's number). LIKE is escaped: `_` is common in our keys.
const WINDOW_SQL = `
WITH c AS (
  SELECT id, idempotency_key, created_at FROM ledger
  WHERE account_id = ? AND kind = 'charge' AND idempotency_key LIKE ? ESCAPE '\\'
), last AS (SELECT * FROM c ORDER BY id DESC LIMIT 1)
SELECT (SELECT count(*) FROM c)::int AS n, last.idempotency_key AS key,
  (last.id IS NOT NULL AND (?::bigint IS NULL OR last.created_at > now() - ?::bigint * interval '1 millisecond')
   AND NOT EXISTS (SELECT 1 FROM ledger r WHERE r.idempotency_key = 'refund:' || last.idempotency_key)) AS paid
FROM (SELECT 1) one LEFT JOIN last ON true`;

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

export class Ledger {
  readonly #db: Db;
  readonly #accounts: AccountStore;
  readonly #now: () => Date;
  readonly #queues = new Map<string, Pending[]>();
  readonly #flushing = new Set<string>();

  constructor(db: Db, accounts: AccountStore, now: () => Date = () => new Date()) {
    this.#db = db;
    this.#accounts = accounts;
    this.#now = now;
  }

  /** Which charge covers a window now; concurrent callers compute the same next key. */
  async window(accountId: string, spec: WindowSpec): Promise<WindowCharge> {
    const length = spec.lengthMs ?? null;
    const result = await this.#db.raw<{ rows: { n: number; key: string | null; paid: boolean }[] }>(WINDOW_SQL, [
      accountId,
      `${escapeLike(spec.base)}#%`,
      length,
      length,
    ]);
    const row = result.rows[0];
    if (row?.paid && row.key) return { key: row.key, paid: true };
    return { key: windowChargeKey(spec.base, Number(row?.n ?? 0)), paid: false };
  }

  /** Whether a charge was refunded (the refund row exists). */
  async refunded(chargeKey: string): Promise<boolean> {
    return (await this.#db('ledger').where({ idempotency_key: refundKey(chargeKey) }).first('id')) !== undefined;
  }

  async charge(request: ChargeRequest): Promise<ChargeResult> {
    const amount = request.amountMicro;
    if (!Number.isSafeInteger(amount) || amount < 0) throw new RangeError(`bad charge amount ${amount}`);
    if (amount === 0) return { ok: true, chargedMicro: 0, balanceMicro: await this.#accounts.balance(request.accountId), duplicate: false };
    return new Promise<ChargeResult>((resolve, reject) => {
      const queue = this.#queues.get(request.accountId) ?? [];
      queue.push({ request, resolve, reject });
      this.#queues.set(request.accountId, queue);
      if (!this.#flushing.has(request.accountId)) void this.#flush(request.accountId);
    });
  }

  /** Drains one account's queue, one transaction per batch. No await between the empty check and the delete. */
  async #flush(accountId: string): Promise<void> {
    this.#flushing.add(accountId);
    try {
      for (;;) {
        const queue = this.#queues.get(accountId);
        if (!queue?.length) break;
        const batch = queue.splice(0, MAX_BATCH);
        if (!queue.length) this.#queues.delete(accountId);
        try {
          const only = batch.length === 1 ? batch[0] : undefined;
          const results = only ? [await this.#chargeOne(only.request)] : await this.#chargeBatch(accountId, batch.map((p) => p.request));
          batch.forEach((p, i) => p.resolve(results[i] as ChargeResult));
        } catch (error) {
          for (const p of batch) p.reject(error);
        }
      }
    } finally {
      this.#flushing.delete(accountId);
    }
  }

  async #chargeOne(request: ChargeRequest): Promise<ChargeResult> {
    const amount = request.amountMicro;
    const period = periodOf(this.#now());
    const result = await this.#db.raw<{ rows: { grant_micro: string; topoff_micro: string; balance_version: string }[] }>(CHARGE_SQL, [
      ...grantBindings(period),
      request.accountId,
      request.idempotencyKey,
      amount,
      amount,
      amount,
      amount,
      period,
      JSON.stringify(request.breakdown ?? []),
      request.requestId ?? null,
      request.queryId ?? null,
      amount,
      period,
    ]);
    const row = result.rows[0];
    if (row) {
      const balanceMicro = Number(row.grant_micro) + Number(row.topoff_micro);
      return { ok: true, chargedMicro: amount, balanceMicro, duplicate: false, buckets: { micro: balanceMicro, version: Number(row.balance_version) } };
    }
    // Nothing happened: the idempotency key was used already, or the balance was short.
    const balanceMicro = await this.#accounts.balance(request.accountId);
    const existing = await this.#db('ledger').where({ idempotency_key: request.idempotencyKey }).first('amount_micro');
    if (existing) return { ok: true, chargedMicro: Number(existing.amount_micro), balanceMicro, duplicate: true };
    return { ok: false, balanceMicro };
  }

  async #chargeBatch(accountId: string, requests: readonly ChargeRequest[]): Promise<ChargeResult[]> {
    return this.#db.transaction(async (trx) => {
      const row = await trx<AccountRow>('accounts').where({ id: accountId }).forUpdate().first();
      if (!row) throw new AccountNotFound(accountId);
      const period = periodOf(this.#now());
      let { grantMicro: grant, topoffMicro: topoff } = accountFromRow(row, this.#now());
      const keys = [...new Set(requests.map((r) => r.idempotencyKey))];
      const done = new Map<string, number>(
        (await trx('ledger').whereIn('idempotency_key', keys).select('idempotency_key', 'amount_micro')).map((r) => [
          r.idempotency_key as string,
          Number(r.amount_micro),
        ]),
      );
      const inserts: Record<string, unknown>[] = [];
      const results: ChargeResult[] = [];
      for (const r of requests) {
        const previous = done.get(r.idempotencyKey);
        if (previous !== undefined) {
          results.push({ ok: true, chargedMicro: previous, balanceMicro: grant + topoff, duplicate: true });
          continue;
        }
        const split = splitCharge(grant, topoff, r.amountMicro);
        if (!split) {
          results.push({ ok: false, balanceMicro: grant + topoff });
          continue;
        }
        grant -= split.fromGrant;
        topoff -= split.fromTopoff;
        done.set(r.idempotencyKey, r.amountMicro);
        inserts.push({
          account_id: accountId,
          idempotency_key: r.idempotencyKey,
          kind: 'charge',
          amount_micro: r.amountMicro,
          grant_micro: split.fromGrant,
          topoff_micro: split.fromTopoff,
          period,
          breakdown: JSON.stringify(r.breakdown ?? []),
          request_id: r.requestId ?? null,
          query_id: r.queryId ?? null,
        });
        results.push({ ok: true, chargedMicro: r.amountMicro, balanceMicro: grant + topoff, duplicate: false });
      }
      if (inserts.length) {
        await trx('ledger').insert(inserts);
        await trx('accounts').where({ id: accountId }).update({ grant_micro: grant, topoff_micro: topoff, period, updated_at: trx.fn.now() });
      }
      return results;
    });
  }

  /**
   * Refunds the charge made under `chargeKey`, once; returns the micro-USD returned (0 if none).
   * A lookup spent under a credit lease is refunded through its lease (`LeaseBook.refund`) instead.
   */
  async refund(chargeKey: string, requestId?: string): Promise<number> {
    const [sql, bindings] = refundStatement(chargeKey, periodOf(this.#now()), { underLease: false, requestId });
    const result = await this.#db.raw<{ rows: unknown[] }>(sql, bindings);
    if (!result.rows.length) return 0;
    const row = await this.#db('ledger').where({ idempotency_key: refundKey(chargeKey) }).first('amount_micro');
    return -Number(row?.amount_micro ?? 0);
  }
}

/** The refund of the charge under `chargeKey`, as one statement (run alone or inside a lease's transaction). */
export function refundStatement(chargeKey: string, period: string, options: { underLease: boolean; requestId?: string }): [string, Knex.RawBinding[]] {
  const requestId = options.requestId;
  return [REFUND_SQL, [chargeKey, options.underLease, ...grantBindings(period), refundKey(chargeKey), period, period, period, requestId ?? null, period]];
}
