/**
 * The money invariants the load run checks per account, one function each:
 *   - the usage log equals the X-Credit-Cost the clients received (per key: each load account has
 *     one key), its records less the ledger's refunds, as the clients' sum is;
 *   - the usage log equals the ledger, in amount and in requests (a charge row counts `requests`),
 *     records marked forgiven (the buckets could not cover a late charge) left out;
 *   - and the ledger equals the X-Credit-Cost received, which the two above imply.
 * An account may differ only by charges an api-kill forgave (answers of the killed API in its last
 * flush interval), or refunded after Redis forgot their completion (DECISIONS §3 "Refunds"), and
 * then only downward: a fault never charges more than the clients were told.
 */
const usd = (micro: number) => `$${(micro / 1_000_000).toFixed(6)}`;

export interface Invariant {
  readonly name: string;
  readonly checked: {
    readonly leftMicro: number;
    readonly rightMicro: number;
    /** Σ requests on each side, when the invariant counts them too. */
    readonly requests?: { readonly left: number; readonly right: number };
    /** `account left≠right`, goal none. */
    readonly accountsOff: string[];
    /** `account: $x forgiven`: short by no more than the api-kill's forgivable charges. */
    readonly forgiven: string[];
  };
  /** A line that says more about a difference (which ledger rows no usage record stands for). */
  readonly detail?: string;
}

/** Per account id, micro-USD. */
export type ByAccount = ReadonlyMap<string, number>;

/** `usageLogNet`: every record's cost less the ledger's refunds, per account (`usage-log.ts`). */
export function usageLogEqualsReceived(usageLogNet: ByAccount, received: ByAccount, forgivable: ByAccount): Invariant {
  return { name: 'usage log = X-Credit-Cost received', checked: compare(usageLogNet, received, forgivable) };
}

/** Amount and request count per account: the usage log's charged records against the ledger's charge rows. */
export function usageLogEqualsLedger(
  usageLog: { micro: ByAccount; requests: ByAccount },
  ledger: { micro: ByAccount; requests: ByAccount },
  unlogged?: { rows: number; micro: number; keys: string[] },
): Invariant {
  const amounts = compare(usageLog.micro, ledger.micro, new Map());
  const counts = compare(usageLog.requests, ledger.requests, new Map(), String);
  const total = (map: ByAccount) => [...map.values()].reduce((n, v) => n + v, 0);
  return {
    name: 'usage log = ledger (amount and requests)',
    checked: {
      ...amounts,
      accountsOff: [...amounts.accountsOff, ...counts.accountsOff.map((off) => `${off} requests`)],
      requests: { left: total(usageLog.requests), right: total(ledger.requests) },
    },
    detail: unlogged?.rows ? `${unlogged.rows} ledger charge rows (${usd(unlogged.micro)}) have no usage record: ${unlogged.keys.slice(0, 3).join(', ')}` : undefined,
  };
}

export function ledgerEqualsReceived(ledger: ByAccount, received: ByAccount, forgivable: ByAccount): Invariant {
  return { name: 'ledger = X-Credit-Cost received', checked: compare(ledger, received, forgivable) };
}

export function holds(invariant: Invariant): boolean {
  return invariant.checked.accountsOff.length === 0;
}

/** `left` is what was recorded, `right` what the clients were told (or the ledger). */
function compare(left: ByAccount, right: ByAccount, forgivable: ByAccount, unit: (n: number) => string = usd): Invariant['checked'] {
  const ids = new Set([...left.keys(), ...right.keys()]);
  const accountsOff: string[] = [];
  const forgiven: string[] = [];
  for (const id of ids) {
    const [recorded, told] = [left.get(id) ?? 0, right.get(id) ?? 0];
    if (recorded === told) continue;
    const short = told - recorded;
    if (short > 0 && short <= (forgivable.get(id) ?? 0)) forgiven.push(`${id}: ${unit(short)} forgiven`);
    else accountsOff.push(`${id} ${unit(recorded)}≠${unit(told)}`);
  }
  const total = (map: ByAccount) => [...map.values()].reduce((n, v) => n + v, 0);
  return { leftMicro: total(left), rightMicro: total(right), accountsOff, forgiven };
}

export function formatInvariant(invariant: Invariant): string {
  const { leftMicro, rightMicro, requests, accountsOff, forgiven } = invariant.checked;
  const verdict = accountsOff.length === 0 ? 'EQUAL' : 'DIFFERENT';
  const counted = requests ? ` (${requests.left} vs ${requests.right} requests)` : '';
  const detail = invariant.detail ? `\n    ${invariant.detail}` : '';
  return (
    `  ${invariant.name}: ${usd(leftMicro)} vs ${usd(rightMicro)}${counted}, ${accountsOff.length} accounts differ${accountsOff.length ? ` (${accountsOff.slice(0, 5).join(', ')})` : ''}` +
    `${forgiven.length ? `, ${forgiven.length} forgiven after api-kill or refunded after Redis forgot a completion (${forgiven.slice(0, 5).join(', ')})` : ''}: ${verdict}${detail}`
  );
}
