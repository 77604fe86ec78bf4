/**
 * Billing writes kept alive past their response (refunds, completions, an early lease extension),
 * so SIGTERM and tests can wait for them; and the one place a charge is counted in the metrics.
 */
import type { Logger } from '@uda/shared/logger';
import type { Metrics } from '../metrics.ts';
import type { ChargeSpec, Payer } from './types.ts';

export class PendingWrites {
  readonly #logger: Logger | undefined;
  readonly #pending = new Set<Promise<unknown>>();

  constructor(logger: Logger | undefined) {
    this.#logger = logger;
  }

  /** Keeps a billing write alive past its response, so SIGTERM can wait for it; logs a failure. */
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

  /** Resolves once every tracked write has ended, including those tracked while waiting. */
  async done(): Promise<void> {
    while (this.#pending.size) await Promise.all([...this.#pending]);
  }
}

/** Counts credit charged, by tier and price class. */
export function countCharge(metrics: Metrics | undefined, payer: Payer, spec: ChargeSpec, chargedMicro: number): void {
  if (chargedMicro) metrics?.creditsChargedMicro.inc({ tier: payer.tier, price_class: spec.priceClass ?? 'open' }, chargedMicro);
}
