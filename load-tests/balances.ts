/**
 * Balances stay true: after the faults, every account's balance as the API tells its
 * caller (`X-Credits-Remaining` of `GET /api/v1/auth/usage`) and as admin shows it equals what was
 * deposited less the ledger's charges and refunds. A balance above that is credit a fault created.
 */
import type { LoadAccount } from './accounts.ts';
import { headerOf } from './mix.ts';

export interface BalanceCheck {
  readonly accounts: number;
  /** `account: shown $x, deposits − ledger $y`, per readout. */
  readonly apiOff: string[];
  readonly adminOff: string[];
  /** Accounts shown more than deposits − ledger by either readout (goal 0: no fault creates credit). */
  readonly creditCreated: number;
}

const usd = (micro: number) => `$${(micro / 1_000_000).toFixed(6)}`;
const PARALLEL = 16;

export async function checkBalances(apiUrl: string, adminUrl: string, adminToken: string, accounts: LoadAccount[], ledgerNet: ReadonlyMap<string, number>): Promise<BalanceCheck> {
  const apiOff: string[] = [];
  const adminOff: string[] = [];
  let creditCreated = 0;
  const checkOne = async (account: LoadAccount) => {
    const expected = account.depositMicro - (ledgerNet.get(account.id) ?? 0);
    const [fromApi, fromAdmin] = await Promise.all([apiBalance(apiUrl, account), adminBalance(adminUrl, adminToken, account.id)]);
    if (fromApi !== expected) apiOff.push(`${account.id}: shown ${usd(fromApi)}, deposits − ledger ${usd(expected)}`);
    if (fromAdmin !== expected) adminOff.push(`${account.id}: shown ${usd(fromAdmin)}, deposits − ledger ${usd(expected)}`);
    if (fromApi > expected || fromAdmin > expected) creditCreated++;
  };
  for (let start = 0; start < accounts.length; start += PARALLEL) await Promise.all(accounts.slice(start, start + PARALLEL).map(checkOne));
  return { accounts: accounts.length, apiOff, adminOff, creditCreated };
}

/** From the account's own addresses (as the mix sends), so no per-address limit is touched. */
async function apiBalance(apiUrl: string, account: LoadAccount): Promise<number> {
  const res = await fetch(`${apiUrl}/api/v1/auth/usage`, { headers: { authorization: `Bearer ${account.key}`, 'x-forwarded-for': `10.${(account.index >> 8) & 255}.${account.index & 255}.255` } });
  await res.text();
  const header = headerOf(Object.fromEntries(res.headers), 'x-credits-remaining');
  if (!res.ok || header === undefined) throw new Error(`balance of ${account.id}: ${res.status}`);
  return Math.round(Number(header) * 1_000_000);
}

async function adminBalance(adminUrl: string, adminToken: string, accountId: string): Promise<number> {
  const res = await fetch(`${adminUrl}/admin/accounts/${accountId}`, { headers: { authorization: `Bearer ${adminToken}` } });
  if (!res.ok) throw new Error(`admin balance of ${accountId}: ${res.status} ${await res.text()}`);
  return Math.round(((await res.json()) as { balance_usd: number }).balance_usd * 1_000_000);
}

export function formatBalances(check: BalanceCheck): string[] {
  return [
    `Balances after the faults (${check.accounts} accounts; deposits − ledger): API X-Credits-Remaining ${check.apiOff.length} differ, admin ${check.adminOff.length} differ; ` +
      `${check.creditCreated} show more credit than deposits − ledger (goal 0)`,
    ...[...check.apiOff.slice(0, 5).map((line) => `  API ${line}`), ...check.adminOff.slice(0, 5).map((line) => `  admin ${line}`)],
  ];
}
