/**
 * Metering helpers used by every metered handler (SPEC "Credits and metering"; DECISIONS §3):
 *
 *   router: authenticate → route limit → meter.requireCredit() → handler
 *   handler: const rows = await work();                 // nothing billed yet
 *            await meter.settle(req, res, { costMicro }); // 402 if the result costs more than the balance
 *            res.json(...);
 *
 * Anonymous callers are never charged. A failed or thrown handler never reaches `settle`, so errors
 * are never billed. Charges are idempotent per key (the request id unless a query id is given).
 */
import type { Request, RequestHandler, Response } from 'express';
import { findSource, type PriceClass } from '@uda/shared/catalog';
import type { Logger } from '@uda/shared/logger';
import type { AccountStore, BreakdownItem } from '../accounts/store.ts';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import type { Metrics } from '../metrics.ts';
import { formatUsd, priceMicro } from '../money.ts';
import { type Caller, callerOf, requestIdOf } from '../request-context.ts';

export interface SettleOptions {
  costMicro: number;
  /** Defaults to `req:<request id>`. Use the query id plus window for SQL results. */
  idempotencyKey?: string;
  breakdown?: readonly BreakdownItem[];
  queryId?: string;
  /** Metrics label; defaults to the class of the breakdown's sources. */
  priceClass?: string;
}

export interface Settlement {
  chargedMicro: number;
  balanceMicro: number;
  idempotencyKey: string;
}

export class Meter {
  readonly #accounts: AccountStore;
  readonly #metrics: Metrics | undefined;
  readonly #logger: Logger | undefined;
  /**
   * accountId → last balance this process saw, for the up-front 402 check only. Only a positive,
   * fresh value skips the database; `settle` is always authoritative, so a stale value can at worst
   * let a request do its work and then get the 402 from `settle`.
   */
  readonly #lastBalance = new Map<string, { micro: number; at: number }>();
  readonly #balanceTtlMs: number;

  constructor(options: { accounts: AccountStore; metrics?: Metrics; logger?: Logger; balanceTtlMs?: number }) {
    this.#accounts = options.accounts;
    this.#metrics = options.metrics;
    this.#logger = options.logger;
    this.#balanceTtlMs = options.balanceTtlMs ?? 2_000;
  }

  #remember(accountId: string, micro: number): void {
    if (this.#lastBalance.size >= 10_000) this.#lastBalance.clear();
    this.#lastBalance.set(accountId, { micro, at: Date.now() });
  }

  async #balanceForPrecheck(accountId: string): Promise<number> {
    const last = this.#lastBalance.get(accountId);
    if (last && last.micro > 0 && Date.now() - last.at < this.#balanceTtlMs) return last.micro;
    const micro = await this.#accounts.balance(accountId);
    this.#remember(accountId, micro);
    return micro;
  }

  /** The caller's price for `rows` rows of a class; 0 for anonymous callers. */
  price(caller: Caller, priceClass: PriceClass, rows: number): number {
    return caller.kind === 'account' ? priceMicro(priceClass, caller.tier, rows) : 0;
  }

  /** 402 before any work when an account's balance is zero (DECISIONS §3). */
  requireCredit(): RequestHandler {
    const balanceOf = (accountId: string) => this.#balanceForPrecheck(accountId);
    return async function requireCredit(req, res, next) {
      const caller = callerOf(req);
      if (caller.kind !== 'account') return next();
      const balance = await balanceOf(caller.accountId);
      if (balance <= 0) throw insufficient(balance, 0);
      res.setHeader('X-Credits-Remaining', formatUsd(balance));
      next();
    };
  }

  /**
   * Charges the finished result. On success sets X-Credit-Cost and X-Credits-Remaining; when the
   * balance can't cover it, throws the 402 and charges nothing.
   */
  async settle(req: Request, res: Response, options: SettleOptions): Promise<Settlement> {
    const caller = callerOf(req);
    const idempotencyKey = options.idempotencyKey ?? `req:${requestIdOf(req) || crypto.randomUUID()}`;
    if (caller.kind !== 'account') return { chargedMicro: 0, balanceMicro: 0, idempotencyKey };
    const result = await this.#accounts.charge({
      accountId: caller.accountId,
      amountMicro: options.costMicro,
      idempotencyKey,
      breakdown: options.breakdown,
      requestId: requestIdOf(req) || undefined,
      queryId: options.queryId,
    });
    this.#remember(caller.accountId, result.balanceMicro);
    if (!result.ok) throw insufficient(result.balanceMicro, options.costMicro);
    const charged = result.duplicate ? 0 : result.chargedMicro;
    if (charged) this.#metrics?.creditsChargedMicro.inc({ tier: caller.tier, price_class: options.priceClass ?? priceClassOf(options.breakdown) }, charged);
    res.setHeader('X-Credit-Cost', formatUsd(charged));
    res.setHeader('X-Credits-Remaining', formatUsd(result.balanceMicro));
    return { chargedMicro: charged, balanceMicro: result.balanceMicro, idempotencyKey };
  }

  /** Returns a charge made under `idempotencyKey`, once. */
  async refund(idempotencyKey: string, requestId?: string): Promise<number> {
    const refunded = await this.#accounts.refund(idempotencyKey, requestId);
    if (refunded) this.#metrics?.refunds.inc();
    return refunded;
  }

  /** For streamed bodies: a stream that breaks part-way is refunded (SPEC credits §5). */
  refundIfIncomplete(res: Response, settlement: Settlement): void {
    if (!settlement.chargedMicro) return;
    res.once('close', () => {
      if (res.writableFinished) return;
      this.refund(settlement.idempotencyKey).catch((err: unknown) =>
        this.#logger?.error({ err, idempotencyKey: settlement.idempotencyKey }, 'refund failed'),
      );
    });
  }
}

function priceClassOf(breakdown: readonly BreakdownItem[] = []): string {
  const classes = new Set(breakdown.map((item) => findSource(item.source)?.priceClass ?? 'open'));
  return classes.size > 1 ? 'mixed' : ([...classes][0] ?? 'open');
}

function insufficient(balanceMicro: number, costMicro: number): ApiError {
  return new ApiError(
    ErrorCode.INSUFFICIENT_CREDIT,
    { credits: { remainingMicro: balanceMicro, requestCostMicro: costMicro } },
    { 'X-Credit-Cost': '0', 'X-Credits-Remaining': formatUsd(balanceMicro) },
  );
}
