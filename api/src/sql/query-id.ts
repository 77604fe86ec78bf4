/**
 * The query id (DECISIONS §6): a UUIDv5 over the account id, the exact SQL text, the sorted dataset
 * ids with their versions, and the export version. Equal inputs give the same id on every API pod,
 * which is what lets the runners' per-query lock and the 5-minute window work across pods.
 */
import { createHash } from 'node:crypto';

/** Our own UUIDv5 namespace (a random v4, fixed forever: changing it changes every query id). */
const NAMESPACE = '6f1d4b6e-2c1f-4a55-9d0e-4c3f0b8a7e21';

export interface QueryIdInput {
  readonly accountId: string;
  readonly sql: string;
  readonly datasets: readonly { readonly id: string; readonly version: string }[];
  readonly exportVersion: string;
}

export function queryIdOf(input: QueryIdInput): string {
  const datasets = [...input.datasets].sort((a, b) => a.id.localeCompare(b.id)).map((d) => [d.id, d.version]);
  // JSON keeps the parts apart, so no SQL text can imitate another field.
  const name = JSON.stringify([input.accountId, input.sql, datasets, input.exportVersion]);
  return uuidV5(name, NAMESPACE);
}

/** RFC 9562 §5.5: SHA-1 over namespace bytes + name, version 5, variant 10. */
export function uuidV5(name: string, namespace: string): string {
  const hash = createHash('sha1').update(Buffer.from(namespace.replace(/-/g, ''), 'hex')).update(name, 'utf8').digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
