/**
 * How a charge's idempotency key is made (DECISIONS §3): always by the server, always scoped by the
 * account. Nothing a client sends (a request id, a header, a query parameter) goes into a key, so no
 * client can make two charges look like one, or its charge look like another account's.
 *
 * - A lookup is its own charge: a random key per charge.
 * - A window (a SQL result's 5 minutes, an export file's 24 h) is a base key; the ledger numbers
 *   the charges made under it (`<base>#<n>`), so after a refund the next request charges anew.
 */
import { randomUUID } from 'node:crypto';

export interface WindowSpec {
  /** `sql:…` or `export:…`, account first. */
  readonly base: string;
  /** How long a charge covers later requests; undefined: as long as the base exists. */
  readonly lengthMs?: number;
}

export function lookupChargeKey(accountId: string): string {
  return `lookup:${accountId}:${randomUUID()}`;
}

/** A lookup's own charge (not a window's). */
export function isLookupKey(chargeKey: string): boolean {
  return chargeKey.startsWith('lookup:');
}

/** A stored SQL result: its window is its lifetime, so the result's creation time is in the base. */
export function sqlWindow(accountId: string, queryId: string, resultCreatedAt: string): WindowSpec {
  return { base: `${sqlQueryPrefix(accountId, queryId)}${resultCreatedAt}` };
}

/** What the window bases of every stored result of one query start with. */
export function sqlQueryPrefix(accountId: string, queryId: string): string {
  return `sql:${accountId}:${queryId}:`;
}

/** The query id a SQL window charge's key names (`sql:<account>:<query>:…`); undefined for any other key. */
export function sqlQueryIdOf(chargeKey: string): string | undefined {
  return chargeKey.startsWith('sql:') ? chargeKey.split(':')[2] : undefined;
}

/** An export file version (its object key names the version) for a rolling window. */
export function exportWindow(accountId: string, fileKey: string, lengthMs: number): WindowSpec {
  return { base: `export:${accountId}:${fileKey}`, lengthMs };
}

/** The key of the `n`th charge under a window. */
export function windowChargeKey(base: string, n: number): string {
  return `${base}#${n}`;
}

/** The account a charge key names (every key is `<kind>:<account>:…`). */
export function accountOfChargeKey(chargeKey: string): string {
  return chargeKey.split(':')[1] ?? '';
}

export function refundKey(chargeKey: string): string {
  return `refund:${chargeKey}`;
}

/** The window base a window charge's key was made from (`<base>#<n>`). */
export function windowBaseOf(chargeKey: string): string {
  const hash = chargeKey.lastIndexOf('#');
  return hash < 0 ? chargeKey : chargeKey.slice(0, hash);
}
