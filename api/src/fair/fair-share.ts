/**
 * The gate every user-SQL runner call passes (DECISIONS §4 Fair shares), before any runner slot is
 * taken: the account's hourly budget of runner time for failed runs (429 when spent), then one of
 * its few concurrent-query tokens, waited for at most `waitMs` (then 429 QUERY_CONCURRENCY_LIMITED with
 * Retry-After: the caller's own parallelism, not a failure of ours, so not a 5xx).
 * The token is released when the call ends, whatever the outcome, and expires by itself after the
 * longest a runner call can take, so a pod that dies cannot leak it. A run that ends without a
 * result but used runner time (timeout, memory cap, we gave up) spends that time from the budget.
 * A Free account signed up from an address also spends it from that address's budget, which all
 * the Free accounts signed up from it share: one address cannot multiply the budget by signing up.
 */
import type { Tier } from '@uda/shared/catalog';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import { RunnerError } from '@uda/shared/runner-contract';
import {
  addressBudgetMessage,
  budgetMessage,
  type BudgetWindow,
  budgetWindowOf,
  concurrencyMessage,
  type FairShareLimits,
  secondsUntil,
} from './rules.ts';
import type { FairStart, FairStore } from './store.ts';

export interface FairCaller {
  readonly accountId: string;
  readonly tier: Tier;
}

export interface FairShareOptions {
  readonly store: FairStore;
  readonly limits: FairShareLimits;
  /** The longest one runner call can take (the API's runner deadline): a token's life past it is a leak. */
  readonly callTimeoutMs: number;
  /** The hashed address an account signed up from (never changes), or undefined (admin-created). */
  readonly signupAddressOf?: (accountId: string) => Promise<string | undefined>;
}

/** One try at a run's start: what the store decided, for whom, and in which budget window. */
export interface FairTry {
  readonly caller: FairCaller;
  readonly budgets: string[];
  readonly window: BudgetWindow;
  readonly now: number;
  readonly started: FairStart;
}

const POLL_MS = 100;
/** Slack on a token's life beyond the call deadline: the call's own cleanup releases it well before. */
const TOKEN_SLACK_MS = 5_000;
const CONCURRENCY_RETRY_AFTER_S = 2;
/** Sign-up addresses remembered per pod; a full map starts over (one PostgreSQL read per account each time). */
const ADDRESS_CACHE_SIZE = 10_000;

export class FairShare {
  readonly #options: FairShareOptions;
  readonly #addresses = new Map<string, string | undefined>();

  constructor(options: FairShareOptions) {
    this.#options = options;
  }

  /**
   * A run's first try at its start (the budgets' check and a token), sent now so that it leaves in
   * one write with the request's other checks of this event-loop turn (the daily cap's count):
   * `run` goes on from it, or `drop` gives its token back when another check refused the request.
   */
  async firstTry(caller: FairCaller): Promise<FairTry> {
    return this.#try(caller, await this.#budgetsOf(caller));
  }

  /** A first try whose run never came: its token goes back (with the request's next Redis call). */
  drop(first: Promise<FairTry>): void {
    void first.then(
      async ({ caller, started }) => {
        if (started.token) await this.#options.store.release(caller.accountId, started.token);
      },
      () => undefined,
    );
  }

  /** Runs `work` (one runner call that may execute SQL) within the caller's share, from `first` when it was tried already. */
  async run<T>(caller: FairCaller, work: () => Promise<T>, first?: Promise<FairTry>): Promise<T> {
    const tried = await (first ?? this.firstTry(caller));
    const token = await this.#start(tried);
    try {
      return await work();
    } catch (error) {
      await this.#spend(tried.budgets, error);
      throw error;
    } finally {
      // Not awaited: the release leaves with the request's next Redis call (its delivery's begin),
      // no round trip of its own; it is sent before the answer, so the caller's next query finds it.
      void this.#options.store.release(caller.accountId, token);
    }
  }

  /** The budgets a caller's failed runs spend from: its own, and a Free account's sign-up address's. */
  async #budgetsOf(caller: FairCaller): Promise<string[]> {
    const lookup = this.#options.signupAddressOf;
    if (caller.tier !== 'free' || !lookup) return [caller.accountId];
    if (!this.#addresses.has(caller.accountId)) {
      if (this.#addresses.size >= ADDRESS_CACHE_SIZE) this.#addresses.clear();
      this.#addresses.set(caller.accountId, await lookup(caller.accountId));
    }
    const address = this.#addresses.get(caller.accountId);
    return address === undefined ? [caller.accountId] : [caller.accountId, `address:${address}`];
  }

  /** One store call: the budgets' check and one of the caller's concurrent-query tokens together. */
  async #try(caller: FairCaller, budgets: string[]): Promise<FairTry> {
    const { limits, store, callTimeoutMs } = this.#options;
    const now = Date.now();
    const window = budgetWindowOf(now, limits.budgetWindowS);
    const caps = budgets.map((key, i) => ({ key, window: window.id, capMs: i === 0 ? limits.budgetSeconds[caller.tier] * 1000 : limits.addressBudgetSeconds * 1000 }));
    const started = await store.start(caller.accountId, limits.concurrent[caller.tier], callTimeoutMs + TOKEN_SLACK_MS, caps);
    return { caller, budgets, window, now, started };
  }

  /** The token of the first try, or of the next tries while none is free, for at most `waitMs`. */
  async #start(first: FairTry): Promise<string> {
    const { caller, budgets } = first;
    const { limits } = this.#options;
    const giveUpAt = first.now + limits.waitMs;
    for (let tried = first; ; tried = await this.#try(caller, budgets)) {
      if (tried.started.spentBudget !== undefined) throw this.#budgetRefusal(caller, tried.started.spentBudget, tried.window, tried.now);
      if (tried.started.token) return tried.started.token;
      if (Date.now() + POLL_MS > giveUpAt) break;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    throw new ApiError(ErrorCode.QUERY_CONCURRENCY_LIMITED, { message: concurrencyMessage(caller.tier, limits) }, { 'Retry-After': String(CONCURRENCY_RETRY_AFTER_S) });
  }

  /** The 429 of a spent budget: the account's own (index 0), or its sign-up address's. */
  #budgetRefusal(caller: FairCaller, spentBudget: number, window: BudgetWindow, now: number): ApiError {
    const { limits } = this.#options;
    const message = spentBudget === 0 ? budgetMessage(caller.tier, limits, window) : addressBudgetMessage(limits, window);
    return new ApiError(ErrorCode.RUNNER_BUDGET_EXCEEDED, { message }, { 'Retry-After': String(secondsUntil(window.resetsAtMs, now)) });
  }

  async #spend(budgets: string[], error: unknown): Promise<void> {
    if (!(error instanceof RunnerError) || !error.workerMs) return;
    const { limits, store } = this.#options;
    const window = budgetWindowOf(Date.now(), limits.budgetWindowS);
    const ms = error.workerMs;
    await Promise.all(budgets.map((key) => store.spend(key, window.id, ms, limits.budgetWindowS * 2)));
  }
}
