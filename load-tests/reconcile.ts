/**
 * The money invariants the load run checks per account, one function each:
 *   - the usage log equals the X-Credit-Cost the clients received;
 *   - the usage log equals the ledger;
 *   - and, until the usage log exists, the ledger equals the X-Credit-Cost received.
 * An account may differ only by charges an api-kill forgave (answers of the killed API in its last
 * flush interval), and then only downward: a fault never charges more than the clients were told.
 */
const usd = (micro: number) => `$${(micro / 1_000_000).toFixed(6)}`;

export interface Invariant {
  readonly name: string;
  /** Undefined when what it compares does not exist yet (the usage log, before it is written). */
  readonly checked?: {
    readonly leftMicro: number;
    readonly rightMicro: number;
    /** `account left≠right`, goal none. */
    readonly accountsOff: string[];
    /** `account: $x forgiven`: short by no more than the api-kill's forgivable charges. */
    readonly forgiven: string[];
  };
}

/** Per account id, micro-USD. */
export type ByAccount = ReadonlyMap<string, number>;

export function usageLogEqualsReceived(usageLog: ByAccount | undefined, received: ByAccount, forgivable: ByAccount): Invariant {
  const name = 'usage log = X-Credit-Cost received';
  return usageLog ? { name, checked: compare(usageLog, received, forgivable) } : { name };
}

export function usageLogEqualsLedger(usageLog: ByAccount | undefined, ledger: ByAccount): Invariant {
  const name = 'usage log = ledger';
  return usageLog ? { name, checked: compare(usageLog, ledger, new Map()) } : { name };
}

export function ledgerEqualsReceived(ledger: ByAccount, received: ByAccount, forgivable: ByAccount): Invariant {
  return { name: 'ledger = X-Credit-Cost received', checked: compare(ledger, received, forgivable) };
}

export function holds(invariant: Invariant): boolean {
  return !invariant.checked || invariant.checked.accountsOff.length === 0;
}

/** `left` is what was recorded, `right` what the clients were told (or the ledger). */
function compare(left: ByAccount, right: ByAccount, forgivable: ByAccount): NonNullable<Invariant['checked']> {
  const ids = new Set([...left.keys(), ...right.keys()]);
  const accountsOff: string[] = [];
  const forgiven: string[] = [];
  for (const id of ids) {
    const [recorded, told] = [left.get(id) ?? 0, right.get(id) ?? 0];
    if (recorded === told) continue;
    const short = told - recorded;
    if (short > 0 && short <= (forgivable.get(id) ?? 0)) forgiven.push(`${id}: ${usd(short)} forgiven`);
    else accountsOff.push(`${id} ${usd(recorded)}≠${usd(told)}`);
  }
  const total = (map: ByAccount) => [...map.values()].reduce((n, v) => n + v, 0);
  return { leftMicro: total(left), rightMicro: total(right), accountsOff, forgiven };
}

export function formatInvariant(invariant: Invariant): string {
  if (!invariant.checked) return `  ${invariant.name}: not checked (no usage log on this branch yet)`;
  const { leftMicro, rightMicro, accountsOff, forgiven } = invariant.checked;
  const verdict = accountsOff.length === 0 ? 'EQUAL' : 'DIFFERENT';
  return (
    `  ${invariant.name}: ${usd(leftMicro)} vs ${usd(rightMicro)}, ${accountsOff.length} accounts differ${accountsOff.length ? ` (${accountsOff.slice(0, 5).join(', ')})` : ''}` +
    `${forgiven.length ? `, ${forgiven.length} forgiven after api-kill (${forgiven.slice(0, 5).join(', ')})` : ''}: ${verdict}`
  );
}
