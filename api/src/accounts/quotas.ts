/**
 * What one account may store and ask for (DECISIONS §4 "Quotas"). Plain functions over plain types:
 * the sheets lifecycle and the payment adapter call them and throw what they answer.
 */
import type { Tier } from '@uda/shared/catalog';

const MB = 1024 * 1024;

export interface SheetQuota {
  /** Sheets the account may hold, in any status. */
  readonly sheets: number;
  /** Total bytes of their uploaded files. */
  readonly bytes: number;
}

/** Per tier: enough for real use on each plan, small enough that one account cannot fill the store. */
export const SHEET_QUOTAS: Readonly<Record<Tier, SheetQuota>> = {
  free: { sheets: 10, bytes: 100 * MB },
  developer: { sheets: 50, bytes: 1024 * MB },
  pro: { sheets: 200, bytes: 10 * 1024 * MB },
};

export interface SheetUsage {
  readonly sheets: number;
  readonly bytes: number;
}

/** Why a change would break the quota, or undefined when it fits. `replacedBytes`: the file a replace drops. */
export function sheetQuotaProblem(
  quota: SheetQuota,
  usage: SheetUsage,
  change: { newSheet: boolean; bytes: number; replacedBytes?: number },
): string | undefined {
  if (change.newSheet && usage.sheets + 1 > quota.sheets) {
    return `Your plan holds at most ${quota.sheets} sheets and you have ${usage.sheets}. Delete one first, or upgrade. Nothing was stored.`;
  }
  const after = usage.bytes - (change.replacedBytes ?? 0) + change.bytes;
  if (after > quota.bytes) {
    return `Your plan holds at most ${formatMb(quota.bytes)} of sheet files; this upload would bring you to ${formatMb(after)}. Delete a sheet first, or upgrade. Nothing was stored.`;
  }
  return undefined;
}

export function formatMb(bytes: number): string {
  return `${(bytes / MB).toFixed(bytes % MB === 0 ? 0 : 1)} MB`;
}

/** Payment requests: a top-off between the minimum and the maximum, and a few pending per account. */
export const PAYMENT_LIMITS = {
  topoffMinMicro: 5_000_000,
  topoffMaxMicro: 1_000_000_000,
  pendingPerAccount: 3,
} as const;

/** Why a top-off amount is refused, or undefined when it is fine. */
export function topoffAmountProblem(amountMicro: number, limits = PAYMENT_LIMITS): string | undefined {
  if (amountMicro < limits.topoffMinMicro || amountMicro > limits.topoffMaxMicro) {
    return `A top-off is between ${limits.topoffMinMicro / 1_000_000} and ${(limits.topoffMaxMicro / 1_000_000).toLocaleString('en-US')} USD.`;
  }
  return undefined;
}

/** Whether one more request fits beside `pending` undecided ones. */
export function pendingAllows(pending: number, limits = PAYMENT_LIMITS): boolean {
  return pending < limits.pendingPerAccount;
}
