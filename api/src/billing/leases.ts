/**
 * Credit leases in PostgreSQL, the source of truth (rules in index.ts's header). A lease moves
 * a slice of an account's balance out of its buckets, grant first then top-off exactly as a charge
 * does, so lookups can spend it in a wallet (`wallet.ts`) without a transaction each. The ledger shows the slice as a `lease` row; the lookups spent under
 * it arrive later as ordinary `charge` rows with `lease_id` set, which leave the buckets alone.
 *
 * Settling a lease returns `amount − Σ charges under it + Σ refunds of them` to the buckets, as a
 * `lease_return` row. It is a true-up, not a one-off: it returns what is owed minus what earlier
 * returns gave back, so running it twice does nothing and a refund that arrives after the lease
 * settled is returned by running it again. The unspent part goes back to the bucket it came from,
 * the spending having used the grant part first; a grant part from an earlier month is dropped, as
 * the monthly reset would have dropped it had it stayed in the bucket.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { type AccountRow, AccountNotFound, accountFromRow } from '../accounts/store.ts';
import type { Db } from '../db/index.ts';
import { periodOf, splitCharge } from '../money.ts';
import { refundKey } from './charge-keys.ts';
import { type JournalRow, writeJournal } from './journal-statement.ts';
import { leaseSums, owedBack } from './lease-owed.ts';
import { refundStatement } from './ledger.ts';
import type { OutboxWrite } from './usage-outbox.ts';
import type { Buckets } from './wallet.ts';

export type { JournalRow } from './journal-statement.ts';

/** How long a lease lives before the reconciler settles it. */
export const LEASE_TTL_MS = 30_000;
/** A lease covers about this many seconds of the account's recent spending ... */
const LEASE_SECONDS = 10;
/** ... and at least this many requests of the current price ... */
const LEASE_MIN_REQUESTS = 20;
/** ... and at most this part of the balance, unless the balance is small enough to take whole. */
const LEASE_MAX_SHARE = 0.5;

/**
 * How much a new lease (or an extension) takes: about ten seconds of the account's recent spend and
 * at least twenty requests' worth, but at most half the balance; a balance under two minimum
 * slices (forty requests) is taken whole, so a small account is not sent back to PostgreSQL every
 * few requests. Never more than the balance (the lease's transaction caps it too).
 */
export function leaseSize(input: { costMicro: number; spendPerSecondMicro: number; balanceMicro: number }): number {
  const least = input.costMicro * LEASE_MIN_REQUESTS;
  if (input.balanceMicro <= 2 * least) return input.balanceMicro;
  const wanted = Math.max(least, Math.round(input.spendPerSecondMicro * LEASE_SECONDS));
  return Math.min(wanted, Math.floor(input.balanceMicro * LEASE_MAX_SHARE));
}

/**
 * The account's recent spend rate, estimated from this pod's last lease for it (`leaseSize`'s
 * input): at least a second between takes counts, so a lease grows at most tenfold per take.
 */
export function spendPerSecond(last: { micro: number; at: number } | undefined, now: number): number {
  return last ? (1_000 * last.micro) / Math.max(1_000, now - last.at) : 0;
}

export type TakeResult =
  /** `part`: the lease's part this take added (0: it opened the lease). */
  | { readonly ok: true; readonly leaseId: string; readonly part: number; readonly addedMicro: number; readonly buckets: Buckets }
  | { readonly ok: false; readonly buckets: Buckets };

export interface LeaseRefund {
  readonly refundedMicro: number;
  readonly accountId: string;
  readonly leaseId: string;
  /** The lease was still open: the amount belongs in its wallet now. */
  readonly leaseOpen: boolean;
  readonly buckets: Buckets;
}

interface LeaseRow {
  id: string;
  account_id: string;
  amount_micro: string;
  grant_micro: string;
  topoff_micro: string;
  parts: number;
  period: string;
  settled_at: Date | null;
}

type Trx = Knex.Transaction;

export class LeaseBook {
  readonly #db: Db;
  readonly #now: () => number;
  readonly #ttlMs: number;

  /** `ttlMs`: how long a lease lives before a reconciler settles it (tests shorten it). */
  constructor(db: Db, now: () => number = Date.now, ttlMs = LEASE_TTL_MS) {
    this.#db = db;
    this.#now = now;
    this.#ttlMs = ttlMs;
  }

  /** The account's buckets (grant + top-off, monthly reset applied, and each), and their version. */
  async buckets(accountId: string): Promise<Buckets & { readonly grantMicro: number; readonly topoffMicro: number }> {
    const row = await this.#db<AccountRow>('accounts').where({ id: accountId }).first();
    if (!row) throw new AccountNotFound(accountId);
    const { grantMicro, topoffMicro } = accountFromRow(row, this.#date());
    return { ...this.#bucketsOf(row), grantMicro, topoffMicro };
  }

  /**
   * Moves `size(balance)` of the balance into the account's open lease (a new one when none is
   * open); refuses when the balance is below `minMicro`.
   */
  async take(accountId: string, size: (balanceMicro: number) => number, minMicro: number): Promise<TakeResult> {
    return this.#db.transaction(async (trx) => {
      const account = await this.#lockAccount(trx, accountId);
      const { grantMicro, topoffMicro } = accountFromRow(account, this.#date());
      const amount = Math.min(size(grantMicro + topoffMicro), grantMicro + topoffMicro);
      if (amount < minMicro || amount <= 0) return { ok: false, buckets: this.#bucketsOf(account) };
      const lease = (await this.#openLease(trx, accountId)) ?? (await this.#newLease(trx, accountId));
      const split = splitCharge(grantMicro, topoffMicro, amount)!;
      const period = periodOf(this.#date());
      await trx('ledger').insert({
        account_id: accountId,
        idempotency_key: `lease:${accountId}:${lease.id}#${lease.parts}`,
        kind: 'lease',
        amount_micro: amount,
        grant_micro: split.fromGrant,
        topoff_micro: split.fromTopoff,
        period,
        lease_id: lease.id,
      });
      await trx('credit_leases')
        .where({ id: lease.id })
        .update({
          amount_micro: trx.raw('amount_micro + ?', [amount]),
          grant_micro: trx.raw('grant_micro + ?', [split.fromGrant]),
          topoff_micro: trx.raw('topoff_micro + ?', [split.fromTopoff]),
          parts: lease.parts + 1,
        });
      const buckets = await this.#setBuckets(trx, accountId, grantMicro - split.fromGrant, topoffMicro - split.fromTopoff, period);
      return { ok: true, leaseId: lease.id, part: lease.parts, addedMicro: amount, buckets };
    });
  }

  /** Writes a journal batch under its leases, and its usage records (`journal-statement.ts`); answers the rows it did not write, and why. */
  writeJournal(rows: readonly JournalRow[], outbox?: OutboxWrite): Promise<Map<string, 'late' | 'taken'>> {
    return writeJournal(this.#db, rows, periodOf(this.#date()), outbox);
  }

  /**
   * Settles a lease: returns what it did not spend and marks it settled. The caller closed its
   * wallet and flushed its charges first. Idempotent; undefined for an unknown lease.
   */
  async settle(leaseId: string): Promise<{ accountId: string; buckets: Buckets } | undefined> {
    return this.#db.transaction(async (trx) => {
      const found = await trx<LeaseRow>('credit_leases').where({ id: leaseId }).first('account_id');
      if (!found) return undefined;
      const account = await this.#lockAccount(trx, found.account_id);
      const lease = (await trx<LeaseRow>('credit_leases').where({ id: leaseId }).forUpdate().first())!;
      if (!lease.settled_at) await trx('credit_leases').where({ id: leaseId }).update({ settled_at: trx.fn.now() });
      return { accountId: lease.account_id, buckets: await this.#trueUp(trx, lease, account) };
    });
  }

  /**
   * Refunds a flushed lookup charge that was spent under a lease: the refund row carries the lease,
   * and leaves the buckets alone while the lease is open (its wallet takes the amount back); after
   * the lease settled, the true-up returns it to the buckets in the same transaction.
   */
  async refund(chargeKey: string): Promise<LeaseRefund | undefined> {
    return this.#db.transaction(async (trx) => {
      const charge = await trx('ledger').where({ idempotency_key: chargeKey, kind: 'charge' }).first('account_id', 'lease_id');
      if (!charge?.lease_id) return undefined;
      await this.#lockAccount(trx, charge.account_id as string);
      const lease = (await trx<LeaseRow>('credit_leases').where({ id: charge.lease_id as string }).forUpdate().first())!;
      const [sql, bindings] = refundStatement(chargeKey, periodOf(this.#date()), { underLease: true });
      const inserted = (await trx.raw<{ rows: unknown[] }>(sql, bindings)).rows.length > 0;
      const row = await trx('ledger').where({ idempotency_key: refundKey(chargeKey) }).first('amount_micro');
      const refundedMicro = inserted ? -Number(row?.amount_micro ?? 0) : 0;
      // The statement touched the account row (its monthly reset, its version): read it again.
      const account = await this.#lockAccount(trx, lease.account_id);
      const buckets = lease.settled_at ? await this.#trueUp(trx, lease, account) : this.#bucketsOf(account);
      return { refundedMicro, accountId: lease.account_id, leaseId: lease.id, leaseOpen: !lease.settled_at, buckets };
    });
  }

  /**
   * Refunds a lookup that a journal flush wrote inside an aggregated row (`journal.ts`): a refund row
   * under its lease, for the amount the pod charged, once (its key is the charge's refund key).
   */
  async refundAggregated(charge: { accountId: string; leaseId: string; key: string; amountMicro: number }): Promise<LeaseRefund> {
    return this.#db.transaction(async (trx) => {
      await this.#lockAccount(trx, charge.accountId);
      const lease = (await trx<LeaseRow>('credit_leases').where({ id: charge.leaseId }).forUpdate().first())!;
      const row = { account_id: charge.accountId, idempotency_key: refundKey(charge.key), kind: 'refund', amount_micro: -charge.amountMicro, grant_micro: 0, topoff_micro: 0, period: periodOf(this.#date()), lease_id: charge.leaseId };
      const inserted = (await trx('ledger').insert(row).onConflict('idempotency_key').ignore().returning('id')).length > 0;
      const account = await this.#lockAccount(trx, charge.accountId);
      const buckets = lease.settled_at ? await this.#trueUp(trx, lease, account) : this.#bucketsOf(account);
      return { refundedMicro: inserted ? charge.amountMicro : 0, accountId: charge.accountId, leaseId: lease.id, leaseOpen: !lease.settled_at, buckets };
    });
  }

  /** Open leases past their expiry, oldest first. */
  async expired(limit = 100): Promise<{ leaseId: string; accountId: string }[]> {
    const rows = await this.#db<LeaseRow>('credit_leases')
      .whereNull('settled_at')
      .andWhere('expires_at', '<', new Date(this.#now()))
      .orderBy('expires_at')
      .limit(limit)
      .select('id', 'account_id');
    return rows.map((r) => ({ leaseId: r.id, accountId: r.account_id }));
  }

  /** The account's open lease, if any. */
  async open(accountId: string): Promise<string | undefined> {
    return (await this.#db<LeaseRow>('credit_leases').where({ account_id: accountId }).whereNull('settled_at').first('id'))?.id;
  }

  /** What the account's open lease took from each bucket. */
  async openParts(accountId: string): Promise<{ grantMicro: number; topoffMicro: number } | undefined> {
    const row = await this.#db<LeaseRow>('credit_leases').where({ account_id: accountId }).whereNull('settled_at').first('grant_micro', 'topoff_micro');
    return row && { grantMicro: Number(row.grant_micro), topoffMicro: Number(row.topoff_micro) };
  }

  /**
   * What settling the account's open lease now would return to each bucket: its unspent credit as
   * PostgreSQL knows it, less `unflushedMicro` (charges under it not written yet). The readouts'
   * figure when the wallet does not hold the whole lease (Redis lost it); undefined without one.
   */
  async openOwed(accountId: string, unflushedMicro: (leaseId: string) => number): Promise<{ leaseId: string; grantMicro: number; topoffMicro: number } | undefined> {
    const lease = await this.#db<LeaseRow>('credit_leases').where({ account_id: accountId }).whereNull('settled_at').first();
    if (!lease) return undefined;
    const owed = owedBack(lease, await leaseSums(this.#db, lease.id), unflushedMicro(lease.id), periodOf(this.#date()));
    return { leaseId: lease.id, grantMicro: owed.grantBack, topoffMicro: owed.topoffDue };
  }

  /** Returns to the buckets what the lease owes them now, less what earlier returns gave back. */
  async #trueUp(trx: Trx, lease: LeaseRow, account: AccountRow): Promise<Buckets> {
    const sums = await leaseSums(trx, lease.id);
    const period = periodOf(this.#date());
    const { grantDue, topoffDue, grantBack } = owedBack(lease, sums, 0, period);
    const current = accountFromRow(account, this.#date());
    if (!grantDue && !topoffDue) return this.#bucketsOf(account);
    await trx('ledger').insert({
      account_id: lease.account_id,
      idempotency_key: `lease-return:${lease.account_id}:${lease.id}#${sums.returns}`,
      kind: 'lease_return',
      amount_micro: -(grantDue + topoffDue),
      grant_micro: -grantDue,
      topoff_micro: -topoffDue,
      period,
      lease_id: lease.id,
    });
    return this.#setBuckets(trx, lease.account_id, current.grantMicro + grantBack, current.topoffMicro + topoffDue, period);
  }

  /**
   * FOR NO KEY UPDATE, not FOR UPDATE: a journal flush's ledger insert takes the account row's key
   * share lock (the foreign key) while it holds its lease's share lock, and a settlement locks the
   * account before the lease: FOR UPDATE would make the two wait on each other.
   */
  async #lockAccount(trx: Trx, accountId: string): Promise<AccountRow> {
    const row = await trx<AccountRow>('accounts').where({ id: accountId }).forNoKeyUpdate().first();
    if (!row) throw new AccountNotFound(accountId);
    return row;
  }

  async #openLease(trx: Trx, accountId: string): Promise<LeaseRow | undefined> {
    return trx<LeaseRow>('credit_leases').where({ account_id: accountId }).whereNull('settled_at').forUpdate().first();
  }

  async #newLease(trx: Trx, accountId: string): Promise<LeaseRow> {
    const row = { id: randomUUID(), account_id: accountId, period: periodOf(this.#date()), expires_at: new Date(this.#now() + this.#ttlMs) };
    await trx('credit_leases').insert(row);
    return { ...row, amount_micro: '0', grant_micro: '0', topoff_micro: '0', parts: 0, settled_at: null };
  }

  async #setBuckets(trx: Trx, accountId: string, grantMicro: number, topoffMicro: number, period: string): Promise<Buckets> {
    const [row] = (await trx('accounts')
      .where({ id: accountId })
      .update({ grant_micro: grantMicro, topoff_micro: topoffMicro, period, updated_at: trx.fn.now() })
      .returning(['balance_version'])) as { balance_version: string }[];
    return { micro: grantMicro + topoffMicro, version: Number(row?.balance_version) };
  }

  #bucketsOf(row: AccountRow): Buckets {
    const account = accountFromRow(row, this.#date());
    return { micro: account.grantMicro + account.topoffMicro, version: Number(row.balance_version ?? 0) };
  }

  #date(): Date {
    return new Date(this.#now());
  }
}
