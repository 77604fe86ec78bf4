/**
 * The accounts as the admin API takes and shows them: its input schemas, and an account with its
 * balance (`showAccount`), as plain functions the routes (`routes.ts`) and the CLI share.
 */
import { z } from 'zod';
import type { Account, AccountStore } from '../accounts/store.ts';
import type { BalanceReadout, Billing } from '../billing/index.ts';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import { TIERS } from '../limits.ts';
import { parseUsd, usdNumber } from '../money.ts';

export const tier = z.enum(TIERS as ['free', 'developer', 'pro']);
const usd = z.union([z.string(), z.number()]).transform((v, ctx) => {
  try {
    return parseUsd(String(v));
  } catch {
    ctx.addIssue({ code: 'custom', message: 'usd must be a non-negative amount with at most 6 decimals' });
    return z.NEVER;
  }
});

export const adminSchemas = {
  createAccount: z.object({ email: z.string().min(3).max(320), tier }),
  setTier: z.object({ tier }),
  /** An amount in USD as text or a number; the handler receives it in micro-USD. */
  amount: z.object({ usd }),
  createKey: z.object({ name: z.string().min(1).max(100) }),
  importLegacyKey: z.object({ name: z.string().min(1).max(100), key: z.string().startsWith('dk_') }),
  account: z.object({ id: z.string() }),
  decision: z.object({ id: z.string(), decision: z.string() }),
};

export const accountShown = z.object({ account_id: z.string(), tier, balance_usd: z.number(), grant_usd: z.number(), topoff_usd: z.number() });

/**
 * An account as admin shows it. The balance is the one readout every caller sees (DECISIONS §3
 * "One balance"): the buckets plus the unspent part of the open credit lease, never the buckets alone.
 */
export function showAccount(account: Pick<Account, 'id' | 'tier'>, balance: BalanceReadout): z.infer<typeof accountShown> {
  return {
    account_id: account.id,
    tier: account.tier,
    balance_usd: usdNumber(balance.balanceMicro),
    grant_usd: usdNumber(balance.grantMicro),
    topoff_usd: usdNumber(balance.topoffMicro),
  };
}

/** The account, or 404 ADMIN_NOT_FOUND. */
export async function accountOf(services: { readonly accounts: Pick<AccountStore, 'get'> }, id: string): Promise<Account> {
  const found = await services.accounts.get(id);
  if (!found) throw new ApiError(ErrorCode.ADMIN_NOT_FOUND, { message: `Account ${id} not found.` });
  return found;
}

/** The account by id as admin shows it, or 404 ADMIN_NOT_FOUND. */
export async function show(services: { readonly accounts: Pick<AccountStore, 'get'>; readonly billing: Pick<Billing, 'readout'> }, id: string): Promise<z.infer<typeof accountShown>> {
  return showAccount(await accountOf(services, id), await services.billing.readout(id));
}
