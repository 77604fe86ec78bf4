/**
 * Upgrades and top-offs go through a payment adapter (DECISIONS §10). A real payment provider
 * cannot be reached from here, so the shipped adapter records a request that an operator approves
 * with the admin CLI (`npm run admin -- payments approve <id>`); approval applies the tier change or
 * credits the top-off. Another provider implements the same interface.
 */
import { randomUUID } from 'node:crypto';
import type { Tier } from '@uda/shared/catalog';
import { PAYMENT_LIMITS, pendingAllows, topoffAmountProblem } from '../../accounts/quotas.ts';
import type { AccountStore } from '../../accounts/store.ts';
import type { Db } from '../../db/index.ts';
import { ApiError } from '../../errors/api-error.ts';
import { ErrorCode } from '../../errors/codes.ts';

export type PaymentAsk = { kind: 'upgrade'; tier: Tier } | { kind: 'topoff'; amountMicro: number };

export interface PaymentRequest {
  id: string;
  account_id: string;
  kind: 'upgrade' | 'topoff';
  tier: Tier | null;
  amount_micro: number | null;
  status: 'pending' | 'approved' | 'rejected';
  created_at: string;
  decided_at: string | null;
}

export interface PaymentAdapter {
  /** Shown on the usage page, so the user knows what happens after a request. */
  readonly howItWorks: string;
  request(accountId: string, ask: PaymentAsk): Promise<PaymentRequest>;
  list(accountId: string): Promise<PaymentRequest[]>;
}

export class OperatorApprovalPayments implements PaymentAdapter {
  readonly howItWorks =
    'Payments are not taken online here: your request is recorded and an operator approves it with the admin CLI. Approved upgrades and top-offs apply at once.';
  readonly #db: Db;
  readonly #accounts: AccountStore;

  constructor(db: Db, accounts: AccountStore) {
    this.#db = db;
    this.#accounts = accounts;
  }

  /** 400 for a top-off outside the limits, 409 while the account has its most pending requests. */
  async request(accountId: string, ask: PaymentAsk): Promise<PaymentRequest> {
    const problem = ask.kind === 'topoff' ? topoffAmountProblem(ask.amountMicro) : undefined;
    if (problem) throw new ApiError(ErrorCode.INVALID_INPUT, { message: problem });
    const id = randomUUID();
    await this.#db.transaction(async (trx) => {
      // One request at a time per account, so concurrent requests cannot all pass the count.
      await trx('accounts').where({ id: accountId }).forUpdate().first('id');
      const [{ count }] = (await trx('payment_requests').where({ account_id: accountId, status: 'pending' }).count({ count: '*' })) as [{ count: string | number }];
      if (!pendingAllows(Number(count))) throw pendingError();
      await trx('payment_requests').insert({
        id,
        account_id: accountId,
        kind: ask.kind,
        tier: ask.kind === 'upgrade' ? ask.tier : null,
        amount_micro: ask.kind === 'topoff' ? ask.amountMicro : null,
      });
    });
    return (await this.#get(id)) as PaymentRequest;
  }

  async list(accountId: string): Promise<PaymentRequest[]> {
    const rows = await this.#db('payment_requests').where({ account_id: accountId }).orderBy('created_at', 'desc').limit(50);
    return rows.map(toRequest);
  }

  async pending(): Promise<PaymentRequest[]> {
    return (await this.#db('payment_requests').where({ status: 'pending' }).orderBy('created_at')).map(toRequest);
  }

  /** Approves a pending request once and applies it; undefined when it is unknown or already decided. */
  async approve(id: string): Promise<PaymentRequest | undefined> {
    const decided = await this.#decide(id, 'approved');
    if (!decided) return undefined;
    if (decided.kind === 'upgrade' && decided.tier) await this.#accounts.setTier(decided.account_id, decided.tier);
    if (decided.kind === 'topoff' && decided.amount_micro) await this.#accounts.addTopoff(decided.account_id, decided.amount_micro);
    return decided;
  }

  async reject(id: string): Promise<PaymentRequest | undefined> {
    return this.#decide(id, 'rejected');
  }

  async #decide(id: string, status: 'approved' | 'rejected'): Promise<PaymentRequest | undefined> {
    if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
    // The status guard makes a second approval (or a race between two operators) a no-op.
    const updated = await this.#db('payment_requests').where({ id, status: 'pending' }).update({ status, decided_at: this.#db.fn.now() });
    return updated ? this.#get(id) : undefined;
  }

  async #get(id: string): Promise<PaymentRequest | undefined> {
    const row = await this.#db('payment_requests').where({ id }).first();
    return row && toRequest(row);
  }
}

function pendingError(): ApiError {
  const n = PAYMENT_LIMITS.pendingPerAccount;
  return new ApiError(ErrorCode.PAYMENTS_PENDING, { message: `You have ${n} payment requests waiting for an operator. Wait until one is decided before asking again.` });
}

function toRequest(row: Record<string, unknown>): PaymentRequest {
  return {
    id: String(row.id),
    account_id: String(row.account_id),
    kind: row.kind as PaymentRequest['kind'],
    tier: (row.tier as Tier | null) ?? null,
    amount_micro: row.amount_micro === null || row.amount_micro === undefined ? null : Number(row.amount_micro),
    status: row.status as PaymentRequest['status'],
    created_at: new Date(row.created_at as string).toISOString(),
    decided_at: row.decided_at ? new Date(row.decided_at as string).toISOString() : null,
  };
}
