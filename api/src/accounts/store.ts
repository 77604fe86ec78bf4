/**
 * Accounts: create, read, tier, top-off and grant (DECISIONS §3, §5). The credits ledger, which
 * spends these balances, is `billing/ledger.ts`.
 */
import { randomUUID } from 'node:crypto';
import type { Tier } from '@uda/shared/catalog';
import type { Db } from '../db/index.ts';
import { MONTHLY_GRANT_MICRO_USD } from '../prices.ts';
import { effectiveGrant, grantAfterTierChange, periodOf } from '../money.ts';

export interface Account {
  readonly id: string;
  readonly email: string;
  readonly tier: Tier;
  /** Buckets after the lazy monthly reset, as of the read. */
  readonly grantMicro: number;
  readonly topoffMicro: number;
  /** The account opened the link sent to its email, or an operator made it (DECISIONS §5 "Email"). */
  readonly emailVerified: boolean;
}

export interface AccountRow {
  id: string;
  email: string;
  tier: Tier;
  grant_micro: string | number;
  topoff_micro: string | number;
  period: string;
  email_verified_at?: Date | string | null;
  /** Counts every change of the buckets (a trigger): a cached balance never goes back to an older one. */
  balance_version?: string | number;
}

export class AccountStore {
  readonly #db: Db;
  readonly #now: () => Date;
  readonly #onTierChange: (accountId: string) => Promise<void>;
  /** Told after a top-up, a tier or a grant change: the billing core's cached balance follows. */
  readonly #balanceListeners: ((accountId: string) => Promise<void>)[] = [];

  /** `onTierChange`: cached keys carry the tier and the email's verification, so every pod must hear of a change (`keys/changes.ts`). */
  constructor(db: Db, now: () => Date = () => new Date(), onTierChange: (accountId: string) => Promise<void> = async () => undefined) {
    this.#db = db;
    this.#now = now;
    this.#onTierChange = onTierChange;
  }

  /**
   * `emailVerified: false` is for self-serve sign-up only: an account an operator makes (the admin
   * API, the CLI, tests) needs no proof of its email. `signupAddress`: the sign-up's address, hashed
   * (`signupAddressOf`); none for admin-created accounts.
   */
  async create(input: { email: string; tier: Tier; emailVerified?: boolean; signupAddress?: string }): Promise<Account> {
    const id = randomUUID();
    await this.#db('accounts').insert({
      id,
      email: input.email,
      tier: input.tier,
      signup_address: input.signupAddress ?? null,
      grant_micro: MONTHLY_GRANT_MICRO_USD[input.tier],
      topoff_micro: 0,
      period: periodOf(this.#now()),
      email_verified_at: input.emailVerified === false ? null : this.#now(),
    });
    return this.mustGet(id);
  }

  /** The account proved its email; false when it had already. Cached keys carry the state, so every pod hears of it. */
  async markEmailVerified(id: string): Promise<boolean> {
    const updated = await this.#db('accounts').where({ id }).whereNull('email_verified_at').update({ email_verified_at: this.#now(), updated_at: this.#db.fn.now() });
    if (updated) await this.#onTierChange(id);
    return updated > 0;
  }

  async get(id: string): Promise<Account | undefined> {
    if (!isUuid(id)) return undefined;
    const row = await this.#db<AccountRow>('accounts').where({ id }).first();
    return row && this.#toAccount(row);
  }

  async mustGet(id: string): Promise<Account> {
    const account = await this.get(id);
    if (!account) throw new AccountNotFound(id);
    return account;
  }

  /** The hashed address the account signed up from; undefined for accounts the admin API created. */
  async signupAddress(id: string): Promise<string | undefined> {
    if (!isUuid(id)) return undefined;
    const row = await this.#db('accounts').where({ id }).first('signup_address');
    return (row?.signup_address as string | null | undefined) ?? undefined;
  }

  async count(): Promise<number> {
    const row = await this.#db('accounts').count<{ n: string }[]>({ n: '*' }).first();
    return Number(row?.n ?? 0);
  }

  /**
   * The buckets in micro-USD: effective grant plus top-off. Not the balance a caller sees while a
   * credit lease is open (that is `Billing.balance`, DECISIONS §3 "One balance").
   */
  async balance(id: string): Promise<number> {
    const account = await this.mustGet(id);
    return account.grantMicro + account.topoffMicro;
  }

  onBalanceChange(listener: (accountId: string) => Promise<void>): void {
    this.#balanceListeners.push(listener);
  }

  async #balanceChanged(id: string): Promise<void> {
    for (const listener of this.#balanceListeners) await listener(id);
  }

  async setTier(id: string, tier: Tier): Promise<Account> {
    await this.#db.transaction(async (trx) => {
      const row = await trx<AccountRow>('accounts').where({ id }).forUpdate().first();
      if (!row) throw new AccountNotFound(id);
      const current = this.#toAccount(row);
      const grant = grantAfterTierChange(current.grantMicro, current.tier, tier);
      await trx('accounts')
        .where({ id })
        .update({ tier, grant_micro: grant, period: periodOf(this.#now()), updated_at: trx.fn.now() });
    });
    await this.#onTierChange(id);
    await this.#balanceChanged(id);
    return this.mustGet(id);
  }

  async addTopoff(id: string, micro: number): Promise<Account> {
    const updated = await this.#db('accounts').where({ id }).increment('topoff_micro', micro);
    if (!updated) throw new AccountNotFound(id);
    await this.#balanceChanged(id);
    return this.mustGet(id);
  }

  /** Sets the grant bucket for the current period (operators and tests). */
  async setGrant(id: string, micro: number): Promise<Account> {
    const updated = await this.#db('accounts')
      .where({ id })
      .update({ grant_micro: micro, period: periodOf(this.#now()), updated_at: this.#db.fn.now() });
    if (!updated) throw new AccountNotFound(id);
    await this.#balanceChanged(id);
    return this.mustGet(id);
  }

  #toAccount(row: AccountRow): Account {
    return accountFromRow(row, this.#now());
  }
}

/** An account row as of `now`, with the lazy monthly reset applied to its grant. */
export function accountFromRow(row: AccountRow, now: Date): Account {
  const grant = effectiveGrant({ tier: row.tier, grantMicro: Number(row.grant_micro), period: row.period }, now);
  return { id: row.id, email: row.email, tier: row.tier, grantMicro: grant, topoffMicro: Number(row.topoff_micro), emailVerified: Boolean(row.email_verified_at) };
}

export class AccountNotFound extends Error {
  override readonly name = 'AccountNotFound';
  constructor(id: string) {
    super(`account ${id} not found`);
  }
}

export function isUuid(text: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text);
}
