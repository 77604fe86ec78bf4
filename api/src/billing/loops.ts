/**
 * Billing's timers: the reconciler (refunds of dead pods' deliveries, expired leases) and the flush
 * of pending lookups to the ledger. Started and stopped by the composition root (`services.ts`),
 * never by a constructor, so a `Billing` built in a test runs no timer it did not ask for.
 */
import type { Billing } from './billing.ts';

/** How often pending lookups are written to the ledger. */
export const FLUSH_INTERVAL_MS = 250;

export interface BillingLoops {
  stop(): void;
}

/** Runs `billing.reconcile` every `reconcileMs` and `billing.flush` every 250 ms until `stop`. */
export function startBillingLoops(billing: Billing, reconcileMs: number): BillingLoops {
  // `track` logs a failure; the next turn tries again.
  const quietly = (work: () => Promise<unknown>) => () => void billing.track(work()).catch(() => undefined);
  const reconciler = setInterval(quietly(() => billing.reconcile()), reconcileMs);
  reconciler.unref();
  const flusher = setInterval(quietly(() => billing.flush()), FLUSH_INTERVAL_MS);
  flusher.unref();
  return {
    stop: () => {
      clearInterval(reconciler);
      clearInterval(flusher);
    },
  };
}
