/**
 * The gate every user-SQL runner call passes (DECISIONS §4 Fair shares), before any runner slot is
 * taken: the account's hourly budget of runner time for failed runs (429 when spent), then one of
 * its few concurrent-query tokens, waited for at most `waitMs` (then 429 QUERY_CONCURRENCY_LIMITED with
 * Retry-After: the caller's own parallelism, not a failure of ours, so not a 5xx).
 * The token is released when the call ends, whatever the outcome, and expires by itself after the
 * longest a runner call can take, so a pod that dies cannot leak it. A run that ends without a
 * result but used runner time (timeout, memory cap, we gave up) spends that time from the budget.
 */
import type { Tier } from '@uda/shared/catalog';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import { RunnerError } from '@uda/shared/runner-contract';
import {
  budgetMessage,
  budgetSpent,
  budgetWindowOf,
  concurrencyMessage,
  type FairShareLimits,
  secondsUntil,
} from './rules.ts';
import type { FairStore } from './store.ts';

export interface FairCaller {
  readonly accountId: string;
  readonly tier: Tier;
}

export interface FairShareOptions {
  readonly store: FairStore;
  readonly limits: FairShareLimits;
  /** The longest one runner call can take (the API's runner deadline): a token's life past it is a leak. */
  readonly callTimeoutMs: number;
}

const POLL_MS = 100;
/** Slack on a token's life beyond the call deadline: the call's own cleanup releases it well before. */
const TOKEN_SLACK_MS = 5_000;
const CONCURRENCY_RETRY_AFTER_S = 2;

export class FairShare {
  readonly #options: FairShareOptions;

  constructor(options: FairShareOptions) {
    this.#options = options;
  }

  /** Runs `work` (one runner call that may execute SQL) within the caller's share. */
  async run<T>(caller: FairCaller, work: () => Promise<T>): Promise<T> {
    await this.#checkBudget(caller);
    const token = await this.#hold(caller);
    try {
      return await work();
    } catch (error) {
      await this.#spend(caller, error);
      throw error;
    } finally {
      await this.#options.store.release(caller.accountId, token);
    }
  }

  async #checkBudget(caller: FairCaller): Promise<void> {
    const { limits, store } = this.#options;
    const now = Date.now();
    const window = budgetWindowOf(now, limits.budgetWindowS);
    if (!budgetSpent(await store.spent(caller.accountId, window.id), caller.tier, limits)) return;
    throw new ApiError(
      ErrorCode.RUNNER_BUDGET_EXCEEDED,
      { message: budgetMessage(caller.tier, limits, window) },
      { 'Retry-After': String(secondsUntil(window.resetsAtMs, now)) },
    );
  }

  async #hold(caller: FairCaller): Promise<string> {
    const { limits, store, callTimeoutMs } = this.#options;
    const limit = limits.concurrent[caller.tier];
    const ttlMs = callTimeoutMs + TOKEN_SLACK_MS;
    const giveUpAt = Date.now() + limits.waitMs;
    for (;;) {
      const token = await store.tryHold(caller.accountId, limit, ttlMs);
      if (token) return token;
      if (Date.now() + POLL_MS > giveUpAt) break;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    throw new ApiError(ErrorCode.QUERY_CONCURRENCY_LIMITED, { message: concurrencyMessage(caller.tier, limits) }, { 'Retry-After': String(CONCURRENCY_RETRY_AFTER_S) });
  }

  async #spend(caller: FairCaller, error: unknown): Promise<void> {
    if (!(error instanceof RunnerError) || !error.workerMs) return;
    const { limits, store } = this.#options;
    const window = budgetWindowOf(Date.now(), limits.budgetWindowS);
    await store.spend(caller.accountId, window.id, error.workerMs, limits.budgetWindowS * 2);
  }
}
