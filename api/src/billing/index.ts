/**
 * The one door to billing (the lint rule `boundaries/folder-doors`): code outside this folder
 * imports only what is exported here. Read `billing.ts` for the rules every charge follows (its
 * invariants), `http.ts` for the one Express adapter, and DECISIONS §3 for why.
 *
 * - The core: `Billing` (charges, refunds, the balance), and what a handler passes it and gets back.
 * - The adapter: credit headers, the up-front 402, the lookup's hold, a delivery tied to a response.
 * - The server's charge windows (prices are `../prices.ts`, plain functions billing reads too).
 * - The parts the composition root (`services.ts`) builds: the ledger, the lease book, the wallets,
 *   the delivery trackers, the usage log and the background loops.
 */
export { Billing } from './billing.ts';
export type { BalanceReadout, BegunDelivery, Delivery, PaidSqlRead, Payer } from './billing.ts';
export { deliverCharged, holdCredit, holdOf, payerOf, requireCredit, setCreditHeaders } from './http.ts';
export { exportWindow, sqlWindow } from './charge-keys.ts';
export type { WindowSpec } from './charge-keys.ts';
export { Ledger } from './ledger.ts';
export type { BreakdownItem } from './ledger.ts';
export { LEASE_TTL_MS, LeaseBook } from './leases.ts';
export { MemoryWallet } from './wallet-memory.ts';
export { RedisWallet } from './wallet-redis.ts';
export type { Wallet } from './wallet.ts';
export { MemoryDeliveryTracker, ResilientDeliveryTracker } from './deliveries.ts';
export type { DeliveryTracker } from './deliveries.ts';
export { RedisDeliveryTracker } from './deliveries-redis.ts';
export { UsageLog } from './usage-log.ts';
export { startBillingLoops } from './loops.ts';
export type { BillingLoops } from './loops.ts';
