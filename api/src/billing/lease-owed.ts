/**
 * The one arithmetic of what an open or settled credit lease owes the buckets (`leases.ts`): its
 * settlement's true-up returns it, and the readouts count it while Redis lost the lease's wallet
 * (DECISIONS §3: what Redis held is rebuilt from PostgreSQL).
 */
import type { Knex } from 'knex';

/** What the ledger holds under a lease. */
export interface LeaseSums {
  /** Its charges less their refunds. */
  readonly spentMicro: number;
  /** The lease's returns so far, as their rows hold them (negative parts). */
  readonly grantBackMicro: number;
  readonly topoffBackMicro: number;
  readonly returns: number;
}

/** A lease's row, as much of it as the arithmetic reads. */
interface LeaseTaken {
  readonly grant_micro: string;
  readonly topoff_micro: string;
  readonly period: string;
}

export async function leaseSums(q: Knex, leaseId: string): Promise<LeaseSums> {
  const sums = (await q('ledger')
    .where({ lease_id: leaseId })
    .select(
      q.raw(`coalesce(sum(amount_micro) FILTER (WHERE kind IN ('charge', 'refund')), 0) AS spent`),
      q.raw(`coalesce(sum(grant_micro) FILTER (WHERE kind = 'lease_return'), 0) AS grant_back`),
      q.raw(`coalesce(sum(topoff_micro) FILTER (WHERE kind = 'lease_return'), 0) AS topoff_back`),
      q.raw(`count(*) FILTER (WHERE kind = 'lease_return') AS returns`),
    )
    .first()) as { spent: string; grant_back: string; topoff_back: string; returns: string };
  return { spentMicro: Number(sums.spent), grantBackMicro: Number(sums.grant_back), topoffBackMicro: Number(sums.topoff_back), returns: Number(sums.returns) };
}

/**
 * What the lease took less what was spent under it (`sums`, plus `unflushedMicro` not written yet),
 * the grant part spent first, less what earlier returns gave back. `grantBack` is the grant part
 * that reaches the bucket: none when the lease was taken in an earlier month (`period` is this
 * one), as the monthly reset would have dropped it.
 */
export function owedBack(lease: LeaseTaken, sums: LeaseSums, unflushedMicro: number, period: string): { grantDue: number; topoffDue: number; grantBack: number } {
  const [leaseGrant, leaseTopoff, spent] = [Number(lease.grant_micro), Number(lease.topoff_micro), sums.spentMicro + unflushedMicro];
  const spentFromGrant = Math.min(leaseGrant, spent);
  const owedGrant = leaseGrant - spentFromGrant;
  const owedTopoff = Math.max(0, leaseTopoff - (spent - spentFromGrant));
  // Return rows hold negative parts, like refunds.
  const grantDue = owedGrant + sums.grantBackMicro;
  const topoffDue = owedTopoff + sums.topoffBackMicro;
  return { grantDue, topoffDue, grantBack: lease.period === period ? grantDue : 0 };
}
