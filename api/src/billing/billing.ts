/**
 * The billing core: one place for "when is something charged, and when is it refunded"
 * (SPEC "Credits and metering"; DECISIONS §3). Free of Express and MCP: handlers and tools pass a
 * plain payer and get a plain settlement back; `http.ts` is the one adapter that sets headers.
 *
 * Invariants (each is tested; see billing.model.test.ts):
 * 1. A charge's idempotency key is minted by the server and includes the account
 *    (`charge-keys.ts`). Nothing a client sends decides whether a charge is a duplicate.
 * 2. For every charge (a lookup, a SQL window, an export file's 24 h window): if any delivery under
 *    it completed, the charge stands. A refund happens only when no delivery under that charge
 *    completed and none is still in flight (`deliveries.ts`). A lookup has one delivery, its own
 *    response; if its pod dies between the charge and the response, the charge stands (nobody can
 *    tell whether the response went out), where a window's dead deliveries are reaped and refunded.
 * 3. The balance never goes below zero (the ledger's CHECK constraints), and every ledger charge
 *    row is reported, as `X-Credit-Cost`, by exactly one response: the one whose charge inserted
 *    it. Every other response under the charge reports 0.
 * 4. The up-front 402 applies only to requests that would create a new charge. Reading what is
 *    already paid never needs credit.
 * 5. Errors are never billed: an error response always says `X-Credit-Cost: 0`, and a charge made
 *    for a response that then failed is refunded under rule 2.
 * 6. Schema-only SQL (DESCRIBE, SHOW, information_schema) reads no source rows and costs 0; HEAD
 *    on a lookup is not billed (the lookup routes' handlers).
 */
import { randomUUID } from 'node:crypto';
import type { Tier } from '@uda/shared/catalog';
import type { Logger } from '@uda/shared/logger';
import type { AccountStore } from '../accounts/store.ts';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import type { Metrics } from '../metrics.ts';
import { formatUsd } from '../money.ts';
import { type WindowSpec, lookupChargeKey } from './charge-keys.ts';
import type { DeliveryTracker } from './deliveries.ts';
import type { BreakdownItem, Ledger } from './ledger.ts';

/** Who pays: an account at its tier. Anonymous callers are never charged and never get here. */
export interface Payer {
  readonly accountId: string;
  readonly tier: Tier;
}

export interface ChargeSpec {
  readonly costMicro: number;
  readonly breakdown?: readonly BreakdownItem[];
  readonly queryId?: string;
  /** For tracing only: never part of a key. */
  readonly requestId?: string;
  /** Metrics label; defaults to `open`. */
  readonly priceClass?: string;
}

/** What a response reports: `X-Credit-Cost` and `X-Credits-Remaining`. */
export interface Settlement {
  readonly chargedMicro: number;
  readonly balanceMicro: number;
}

export interface WindowOptions extends ChargeSpec {
  /** False for a response that carries no bytes (a HEAD): it never holds a paid charge up. */
  readonly carriesBytes: boolean;
  /** Runs only when this request is about to create a new charge (the export daily cap); returns an undo. */
  readonly beforeCharge?: () => Promise<(() => Promise<void>) | void>;
}

/** One response under a window's charge. End it exactly once; later calls do nothing. */
export interface Delivery {
  readonly settlement: Settlement;
  readonly chargeKey: string;
  /** False for a read of a paid window that carries no bytes: its end decides nothing. */
  readonly holdsCharge: boolean;
  complete(): Promise<void>;
  /** The response broke or failed: refunds under rule 2, and says what the balance is now. */
  abandon(): Promise<Settlement>;
}

export interface BillingOptions {
  readonly ledger: Ledger;
  readonly accounts: AccountStore;
  readonly deliveries: DeliveryTracker;
  readonly metrics?: Metrics;
  readonly logger?: Logger;
  /** How long an in-flight delivery holds its charge without renewal (renewed at a third of it). */
  readonly deliveryTtlMs?: number;
  /** Milliseconds since the epoch; tests move it to expire a dead pod's deliveries. */
  readonly now?: () => number;
}

const WAIT_FOR_REFUND_MS = 25;
const POSITIVE_BALANCE_TTL_MS = 2_000;
const WINDOW_ATTEMPTS = 200;

export class Billing {
  readonly #ledger: Ledger;
  readonly #accounts: AccountStore;
  readonly #deliveries: DeliveryTracker;
  readonly #metrics: Metrics | undefined;
  readonly #logger: Logger | undefined;
  readonly #ttlMs: number;
  readonly #now: () => number;
  /** Refunds and completions still being written: SIGTERM waits for them (`drain`). */
  readonly #pending = new Set<Promise<unknown>>();
  /** accountId → a positive balance this pod saw, for the up-front 402 only (`requireCredit`). */
  readonly #positiveBalances = new Map<string, { micro: number; at: number }>();
  /** Deliveries not ended yet: SIGTERM waits for their responses to close, then ends the rest. */
  readonly #open = new Set<Delivery>();
  #reconciler: NodeJS.Timeout | undefined;

  constructor(options: BillingOptions) {
    this.#ledger = options.ledger;
    this.#accounts = options.accounts;
    this.#deliveries = options.deliveries;
    this.#metrics = options.metrics;
    this.#logger = options.logger;
    this.#ttlMs = options.deliveryTtlMs ?? 60_000;
    this.#now = options.now ?? Date.now;
  }

  balance(accountId: string): Promise<number> {
    return this.#accounts.balance(accountId);
  }

  /**
   * Rule 4: a request that would create a new charge needs a balance above zero. A positive balance
   * this pod saw in the last two seconds is trusted without a database read: at worst a request
   * does its work and then gets the 402 from the charge itself, which is always authoritative.
   */
  async requireCredit(payer: Payer): Promise<number> {
    const seen = this.#positiveBalances.get(payer.accountId);
    if (seen && this.#now() - seen.at < POSITIVE_BALANCE_TTL_MS) return seen.micro;
    const balance = await this.balance(payer.accountId);
    if (balance <= 0) throw insufficientCredit(balance, 0);
    this.#rememberPositive(payer.accountId, balance);
    return balance;
  }

  #rememberPositive(accountId: string, micro: number): void {
    if (micro <= 0) return void this.#positiveBalances.delete(accountId);
    if (this.#positiveBalances.size >= 10_000) this.#positiveBalances.clear();
    this.#positiveBalances.set(accountId, { micro, at: this.#now() });
  }

  /**
   * A lookup: its own charge under a fresh key, after the result exists (402 if it can't be
   * covered). Its one delivery is its response: a response that never went out is refunded.
   */
  async deliverOnce(payer: Payer, spec: ChargeSpec): Promise<Delivery> {
    const chargeKey = lookupChargeKey(payer.accountId);
    const settlement = await this.#chargeOnce(payer, chargeKey, spec);
    let ended = false;
    return {
      settlement,
      chargeKey,
      holdsCharge: true,
      complete: async () => {
        ended = true;
      },
      abandon: async () => {
        const refunded = ended || !settlement.chargedMicro ? 0 : await this.track(this.#writeRefund(chargeKey));
        ended = true;
        return { chargedMicro: 0, balanceMicro: settlement.balanceMicro + refunded };
      },
    };
  }

  async #chargeOnce(payer: Payer, chargeKey: string, spec: ChargeSpec): Promise<Settlement> {
    const result = await this.#ledger.charge({
      accountId: payer.accountId,
      amountMicro: spec.costMicro,
      idempotencyKey: chargeKey,
      breakdown: spec.breakdown,
      requestId: spec.requestId,
      queryId: spec.queryId,
    });
    this.#rememberPositive(payer.accountId, result.balanceMicro);
    if (!result.ok) throw insufficientCredit(result.balanceMicro, spec.costMicro);
    this.#counted(payer, spec, result.chargedMicro);
    return { chargedMicro: result.chargedMicro, balanceMicro: result.balanceMicro };
  }

  /**
   * A response under a window's charge (a SQL result, an export file). Registers the delivery
   * before charging, so no other delivery's break can refund the charge this one stands on; then
   * charges when the window is not paid yet. When the window's charge is being refunded, it waits
   * for the refund and charges under the next key.
   */
  async deliverWindow(payer: Payer, window: WindowSpec, options: WindowOptions): Promise<Delivery> {
    for (let attempt = 0; attempt < WINDOW_ATTEMPTS; attempt++) {
      const current = await this.#ledger.window(payer.accountId, window);
      if (current.paid && !options.carriesBytes) return this.#freeRead(payer, current.key);
      const id = randomUUID();
      if (!(await this.#deliveries.begin(current.key, id, this.#now() + this.#ttlMs))) {
        await sleep(WAIT_FOR_REFUND_MS);
        continue;
      }
      let settlement: Settlement;
      try {
        settlement = current.paid ? { chargedMicro: 0, balanceMicro: await this.balance(payer.accountId) } : await this.#chargeWindow(payer, current.key, options);
      } catch (error) {
        await this.#deliveries.release(current.key, id);
        throw error;
      }
      return this.#delivery(current.key, id, settlement);
    }
    throw new ApiError(ErrorCode.QUERY_BACKEND_UNAVAILABLE, {}, { 'Retry-After': '1' });
  }

  async #chargeWindow(payer: Payer, key: string, options: WindowOptions): Promise<Settlement> {
    const undo = options.costMicro > 0 ? await options.beforeCharge?.() : undefined;
    const result = await this.#ledger
      .charge({ accountId: payer.accountId, amountMicro: options.costMicro, idempotencyKey: key, breakdown: options.breakdown, requestId: options.requestId, queryId: options.queryId })
      .catch(async (error: unknown) => {
        await undo?.();
        throw error;
      });
    this.#rememberPositive(payer.accountId, result.balanceMicro);
    if (!result.ok) {
      await undo?.();
      throw insufficientCredit(result.balanceMicro, options.costMicro);
    }
    // A concurrent request inserted the same key first: that response reports the charge (rule 3).
    const charged = result.duplicate ? 0 : result.chargedMicro;
    if (result.duplicate) await undo?.();
    this.#counted(payer, options, charged);
    return { chargedMicro: charged, balanceMicro: result.balanceMicro };
  }

  async #freeRead(payer: Payer, key: string): Promise<Delivery> {
    const settlement = { chargedMicro: 0, balanceMicro: await this.balance(payer.accountId) };
    return { settlement, chargeKey: key, holdsCharge: false, complete: async () => undefined, abandon: async () => settlement };
  }

  /** A registered delivery, renewed while it runs, ended once. */
  #delivery(chargeKey: string, id: string, settlement: Settlement): Delivery {
    let ended = false;
    const heartbeat = setInterval(() => void this.track(this.#deliveries.touch(chargeKey, id, this.#now() + this.#ttlMs)), Math.ceil(this.#ttlMs / 3));
    heartbeat.unref();
    const end = (): boolean => {
      clearInterval(heartbeat);
      this.#open.delete(delivery);
      const first = !ended;
      ended = true;
      return first;
    };
    const delivery: Delivery = {
      settlement,
      chargeKey,
      holdsCharge: true,
      complete: async () => {
        if (end()) await this.track(this.#deliveries.complete(chargeKey, id));
      },
      abandon: async () => {
        const refunded = end() ? await this.track(this.#abandon(chargeKey, id)) : 0;
        return { chargedMicro: 0, balanceMicro: settlement.balanceMicro + refunded };
      },
    };
    this.#open.add(delivery);
    return delivery;
  }

  async #abandon(chargeKey: string, id: string): Promise<number> {
    if (!(await this.#deliveries.abandon(chargeKey, id, this.#now()))) return 0;
    return this.#refund(chargeKey);
  }

  /** Writes a refund claimed through the tracker; the tracker then lets the window charge anew. */
  async #refund(chargeKey: string): Promise<number> {
    const refunded = await this.#writeRefund(chargeKey);
    await this.#deliveries.refunded(chargeKey);
    return refunded;
  }

  async #writeRefund(chargeKey: string): Promise<number> {
    const refunded = await this.#ledger.refund(chargeKey);
    if (refunded) this.#metrics?.refunds.inc();
    return refunded;
  }

  /** Refunds the charges whose deliveries all died with their pod (rule 2); run by every pod. */
  async reconcile(): Promise<number> {
    const reaped = await this.#deliveries.reap(this.#now());
    for (const chargeKey of reaped) await this.#refund(chargeKey);
    return reaped.length;
  }

  startReconciler(intervalMs: number): void {
    this.#reconciler = setInterval(() => void this.track(this.reconcile()), intervalMs);
    this.#reconciler.unref();
  }

  /** Keeps a billing write alive past its response, so SIGTERM can wait for it. */
  track<T>(promise: Promise<T>): Promise<T> {
    const kept = promise.catch((err: unknown) => {
      this.#logger?.error({ err }, 'billing write failed');
      throw err;
    });
    const settled = kept.then(
      () => undefined,
      () => undefined,
    );
    this.#pending.add(settled);
    void settled.then(() => this.#pending.delete(settled));
    return kept;
  }

  /**
   * Graceful shutdown, after the server closed its connections: waits for the cut responses to end
   * their deliveries (a socket's close event comes a few loop turns later), abandons any still open
   * after `waitMs` (their connections are gone, so nothing was delivered), and waits for every
   * refund and completion to be written.
   */
  async drain(waitMs = 2_000): Promise<void> {
    clearInterval(this.#reconciler);
    for (const until = Date.now() + waitMs; this.#open.size && Date.now() < until; ) await sleep(10);
    await Promise.allSettled([...this.#open].map((delivery) => delivery.abandon()));
    while (this.#pending.size) await Promise.all([...this.#pending]);
  }

  #counted(payer: Payer, spec: ChargeSpec, chargedMicro: number): void {
    if (chargedMicro) this.#metrics?.creditsChargedMicro.inc({ tier: payer.tier, price_class: spec.priceClass ?? 'open' }, chargedMicro);
  }
}

export function insufficientCredit(balanceMicro: number, costMicro: number): ApiError {
  return new ApiError(
    ErrorCode.INSUFFICIENT_CREDIT,
    { credits: { remainingMicro: balanceMicro, requestCostMicro: costMicro } },
    { 'X-Credit-Cost': '0', 'X-Credits-Remaining': formatUsd(balanceMicro) },
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
