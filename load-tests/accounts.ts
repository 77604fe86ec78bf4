/**
 * The load's paying callers: accounts created through the admin API (the operator's path, DECISIONS
 * §5), a third on each tier, each with its key and a top-off large enough that no request of the run
 * meets a 402.
 */
export const TIERS = ['free', 'developer', 'pro'] as const;

export interface LoadAccount {
  /** Its place in the run, 0 … LOAD_ACCOUNTS − 1: the caller's addresses are derived from it. */
  readonly index: number;
  readonly id: string;
  readonly tier: (typeof TIERS)[number];
  readonly key: string;
  /** Its balance before the mix (the tier's grant and the top-off), micro-USD: what was deposited. */
  readonly depositMicro: number;
}

const TOP_OFF_USD = '10000';
const PARALLEL = 16;

export async function createAccounts(adminUrl: string, adminToken: string, count: number): Promise<LoadAccount[]> {
  const admin = async <T>(path: string, body: unknown): Promise<T> => {
    const res = await fetch(`${adminUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`admin ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const createOne = async (i: number): Promise<LoadAccount> => {
    const tier = TIERS[i % TIERS.length]!;
    const created = await admin<{ account_id: string; api_key: string }>('/admin/accounts', { email: `load-${i}@example.com`, tier });
    const shown = await admin<{ balance_usd: number }>(`/admin/accounts/${created.account_id}/topoff`, { usd: TOP_OFF_USD });
    return { index: i, id: created.account_id, tier, key: created.api_key, depositMicro: Math.round(shown.balance_usd * 1_000_000) };
  };
  const accounts: LoadAccount[] = [];
  for (let start = 0; start < count; start += PARALLEL) {
    const batch = Array.from({ length: Math.min(PARALLEL, count - start) }, (_, j) => createOne(start + j));
    accounts.push(...(await Promise.all(batch)));
  }
  return accounts;
}
