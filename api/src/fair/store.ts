/**
 * Where fair shares are counted: per caller, the running queries (each a token that expires, so a
 * pod that dies holding one frees it by itself) and the runner time spent per budget window. One
 * interface, an in-process adapter for the embedded default and a Redis one for every pod.
 */
import { randomUUID } from 'node:crypto';

/** A runner-time budget a start checks first: spent when `key` used `capMs` or more in `window`. */
export interface BudgetCap {
  readonly key: string;
  readonly window: number;
  readonly capMs: number;
}

/**
 * What a start decided: `spentBudget`, the index of the first budget in `budgets` that is spent (no
 * token taken); otherwise `token` for one more running query, or neither when `limit` run already.
 */
export interface FairStart {
  readonly token?: string;
  readonly spentBudget?: number;
}

export interface FairStore {
  /** The budgets' check and a token for one more running query of `key`, in one step (one Redis call). */
  start(key: string, limit: number, ttlMs: number, budgets: readonly BudgetCap[]): Promise<FairStart>;
  release(key: string, token: string): Promise<void>;
  /** Milliseconds of runner time `key` spent in budget window `window`. */
  spent(key: string, window: number): Promise<number>;
  spend(key: string, window: number, ms: number, ttlS: number): Promise<void>;
}

export class MemoryFairStore implements FairStore {
  readonly #held = new Map<string, Map<string, number>>();
  readonly #spent = new Map<string, { ms: number; expiresAt: number }>();

  async start(key: string, limit: number, ttlMs: number, budgets: readonly BudgetCap[]): Promise<FairStart> {
    for (let i = 0; i < budgets.length; i++) {
      const budget = budgets[i]!;
      if ((await this.spent(budget.key, budget.window)) >= budget.capMs) return { spentBudget: i };
    }
    const token = this.#hold(key, limit, ttlMs);
    return token === undefined ? {} : { token };
  }

  #hold(key: string, limit: number, ttlMs: number): string | undefined {
    const now = Date.now();
    const tokens = this.#held.get(key) ?? new Map<string, number>();
    for (const [token, expiresAt] of tokens) if (expiresAt <= now) tokens.delete(token);
    if (tokens.size >= limit) return undefined;
    const token = randomUUID();
    tokens.set(token, now + ttlMs);
    this.#held.set(key, tokens);
    return token;
  }

  async release(key: string, token: string): Promise<void> {
    const tokens = this.#held.get(key);
    tokens?.delete(token);
    if (tokens?.size === 0) this.#held.delete(key);
  }

  async spent(key: string, window: number): Promise<number> {
    const entry = this.#spent.get(`${key}:${window}`);
    return entry && entry.expiresAt > Date.now() ? entry.ms : 0;
  }

  async spend(key: string, window: number, ms: number, ttlS: number): Promise<void> {
    const id = `${key}:${window}`;
    const before = await this.spent(key, window);
    this.#spent.set(id, { ms: before + ms, expiresAt: Date.now() + ttlS * 1000 });
    // Old windows are dropped as new ones are written, so the map stays small.
    for (const [other, entry] of this.#spent) if (entry.expiresAt <= Date.now()) this.#spent.delete(other);
  }
}
