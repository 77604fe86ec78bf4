/**
 * Fair shares of runner capacity (DECISIONS §4), as plain rules: how many queries a caller may run
 * at once, how much runner time its failed runs may take per hour, and what the refusals say.
 */
import { createHash } from 'node:crypto';
import type { Tier } from '@uda/shared/catalog';
import type { CapacityClass } from '@uda/shared/runner-contract';

export interface FairShareLimits {
  /** SQL queries one account runs at once, across every runner and API pod. */
  readonly concurrent: Readonly<Record<Tier, number>>;
  /** How long a query waits for one of its account's running queries to end before 429 QUERY_CONCURRENCY_LIMITED. */
  readonly waitMs: number;
  /** Runner-seconds per window that an account's timed-out or memory-capped runs may take. */
  readonly budgetSeconds: Readonly<Record<Tier, number>>;
  /** The budget's window: clock hours (UTC) by default. */
  readonly budgetWindowS: number;
  /**
   * Runner-seconds per window of the Free accounts signed up from one address, together: signing up
   * more accounts does not buy more runner time for failed runs. One Free account's budget by default.
   */
  readonly addressBudgetSeconds: number;
}

export const DEFAULT_FAIR_SHARE: FairShareLimits = {
  concurrent: { free: 2, developer: 3, pro: 4 },
  waitMs: 2_000,
  budgetSeconds: { free: 120, developer: 600, pro: 1_800 },
  budgetWindowS: 3_600,
  addressBudgetSeconds: 120,
};

export interface BudgetWindow {
  /** The window's number since the epoch: part of its key, so a new window starts at zero. */
  readonly id: number;
  readonly resetsAtMs: number;
}

export function budgetWindowOf(nowMs: number, windowS: number): BudgetWindow {
  const id = Math.floor(nowMs / (windowS * 1000));
  return { id, resetsAtMs: (id + 1) * windowS * 1000 };
}

/** Whole seconds until `atMs`, at least 1 (a Retry-After). */
export function secondsUntil(atMs: number, nowMs: number): number {
  return Math.max(1, Math.ceil((atMs - nowMs) / 1000));
}

export function budgetMessage(tier: Tier, limits: FairShareLimits, window: BudgetWindow): string {
  return (
    `Runner time budget spent: queries that timed out or hit the memory cap used this account's ${limits.budgetSeconds[tier]} ` +
    `runner-seconds for this hour (${tier} tier). New queries are refused until ${resetsAt(window)} UTC; make slow queries cheaper.`
  );
}

export function addressBudgetMessage(limits: FairShareLimits, window: BudgetWindow): string {
  return (
    `Runner time budget spent: queries that timed out or hit the memory cap used the ${limits.addressBudgetSeconds} runner-seconds ` +
    `for this hour that the free accounts signed up from one address share (free tier). New queries are refused until ${resetsAt(window)} UTC; ` +
    'make slow queries cheaper, or upgrade.'
  );
}

function resetsAt(window: BudgetWindow): string {
  return new Date(window.resetsAtMs).toISOString().slice(0, 16).replace('T', ' ');
}

export function concurrencyMessage(tier: Tier, limits: FairShareLimits): string {
  return `This account already runs ${limits.concurrent[tier]} queries at once, the most the ${tier} tier allows; retry when one has ended.`;
}

/**
 * Capacity classes (DECISIONS §4): Free accounts (and anonymous callers, who run no SQL today) hold
 * at most half of the runners' workers; Developer and Pro the rest. The runners enforce it.
 */
export function capacityClassOf(tier: Tier): CapacityClass {
  return tier === 'free' ? 'free' : 'paid';
}

/** What a runner needs to place an account's query: its fairness key (opaque, so account ids stay out of the runners) and its class. */
export function runnerPlaceOf(caller: { readonly accountId: string; readonly tier: Tier }): { tenant: string; capacityClass: CapacityClass } {
  return { tenant: createHash('sha256').update(caller.accountId).digest('hex').slice(0, 32), capacityClass: capacityClassOf(caller.tier) };
}
