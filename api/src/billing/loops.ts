/**
 * Billing's timers: the reconciler (refunds of dead pods' deliveries, expired leases), the flush
 * of this pod's journal to the ledger, and the usage log's files (stored, and pruned past retention). Started and stopped by the composition root (`services.ts`),
 * never by a constructor, so a `Billing` built in a test runs no timer it did not ask for.
 */
import type { Billing } from './billing.ts';

/** How often this pod's journal is written to the ledger. */
export const FLUSH_INTERVAL_MS = 250;
/** How often the usage log's outbox is stored as files, and the days past retention deleted. */
const USAGE_STORE_MS = 10_000;
const USAGE_PRUNE_MS = 3_600_000;

export interface BillingLoops {
  stop(): void;
}

/** Runs `billing.reconcile` every `reconcileMs`, `billing.flush` every 250 ms and the usage log's store and prune until `stop`. */
export function startBillingLoops(billing: Billing, reconcileMs: number): BillingLoops {
  // `track` logs a failure; the next turn tries again.
  const quietly = (work: () => Promise<unknown>) => () => void billing.track(work()).catch(() => undefined);
  const reconciler = setInterval(quietly(() => billing.reconcile()), reconcileMs);
  reconciler.unref();
  const flusher = setInterval(quietly(() => billing.flush()), FLUSH_INTERVAL_MS);
  flusher.unref();
  const usage = setInterval(quietly(() => billing.storeUsage()), USAGE_STORE_MS);
  usage.unref();
  const prune = setInterval(quietly(() => billing.pruneUsage()), USAGE_PRUNE_MS);
  prune.unref();
  return {
    stop: () => {
      for (const timer of [reconciler, flusher, usage, prune]) clearInterval(timer);
    },
  };
}
