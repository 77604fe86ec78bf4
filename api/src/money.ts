/**
 * Money math over integer micro-USD (DECISIONS §3). Plain functions; the ledger's SQL mirrors
 * `splitCharge` and `effectiveGrant`, and the unit tests pin both.
 */
import type { Tier } from '@uda/shared/catalog';
import { MONTHLY_GRANT_MICRO_USD } from './prices.ts';

export const MICRO_PER_USD = 1_000_000;

/** `25000` → `"0.025"`, `4975000` → `"4.975"`, `0` → `"0"`: the header form. */
export function formatUsd(micro: number): string {
  const sign = micro < 0 ? '-' : '';
  const abs = Math.abs(micro);
  const whole = Math.floor(abs / MICRO_PER_USD);
  // Arithmetic, not a regular expression: every charged response prints two of these.
  let fraction = abs % MICRO_PER_USD;
  if (fraction === 0) return `${sign}${whole}`;
  let digits = 6;
  while (fraction % 10 === 0) {
    fraction /= 10;
    digits -= 1;
  }
  return `${sign}${whole}.${String(fraction).padStart(digits, '0')}`;
}

/** Body form: a JSON number in USD. */
export function usdNumber(micro: number): number {
  return Number(formatUsd(micro));
}

/** `"12.5"` → 12_500_000; rejects more than 6 decimals and negatives. */
export function parseUsd(text: string): number {
  if (!/^\d+(\.\d{1,6})?$/.test(text)) throw new RangeError(`not a USD amount with at most 6 decimals: ${text}`);
  const [whole = '0', fraction = ''] = text.split('.');
  return Number(whole) * MICRO_PER_USD + Number(fraction.padEnd(6, '0'));
}

/** The billing period: the calendar month in UTC, `YYYY-MM`. */
export function periodOf(date: Date): string {
  return date.toISOString().slice(0, 7);
}

/** The lazy monthly reset: a bucket from an older period reads as the tier's full grant. */
export function effectiveGrant(account: { tier: Tier; grantMicro: number; period: string }, now: Date): number {
  return account.period === periodOf(now) ? account.grantMicro : MONTHLY_GRANT_MICRO_USD[account.tier];
}

/** The grant is spent first, then the top-off (DECISIONS §3). Undefined when the balance can't cover it. */
export function splitCharge(
  grantMicro: number,
  topoffMicro: number,
  amountMicro: number,
): { fromGrant: number; fromTopoff: number } | undefined {
  if (amountMicro > grantMicro + topoffMicro) return undefined;
  const fromGrant = Math.min(grantMicro, amountMicro);
  return { fromGrant, fromTopoff: amountMicro - fromGrant };
}

/** A plan change takes effect at once: an upgrade grants the new tier's amount now; a downgrade caps it. */
export function grantAfterTierChange(currentGrantMicro: number, from: Tier, to: Tier): number {
  const next = MONTHLY_GRANT_MICRO_USD[to];
  return next >= MONTHLY_GRANT_MICRO_USD[from] ? Math.max(next, currentGrantMicro) : Math.min(next, currentGrantMicro);
}
