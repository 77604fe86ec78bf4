/**
 * The one door to billing (the lint rule `boundaries/folder-doors`): code outside this folder
 * imports only what is exported here. Below are the rules every charge follows (the invariants); `billing.ts` is
 * the core, `http.ts` the one Express adapter, and DECISIONS §3 says why.
 *
 * - The core: `Billing` (charges, refunds, the balance), and what a handler passes it and gets back.
 * - The adapter: credit headers, the up-front 402, the lookup's hold, a delivery tied to a response.
 * - The server's charge windows (prices are `../prices.ts`, plain functions billing reads too).
 * - The parts the composition root (`services.ts`) builds: the ledger, the lease book, the wallets,
 *   the delivery trackers, the usage log and the background loops.
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
 * 7. Lookups are off PostgreSQL's per-request path (credit leases: `leases.ts`, `wallet.ts`).
 *    PostgreSQL stays the source of truth: a lease is a ledger row that moves a slice of the
 *    balance out of the buckets (the CHECK constraints still keep them >= 0), and an account has at
 *    most one open lease. A lookup is one atomic wallet step that spends from the lease; its charge
 *    record stays in this pod's journal (`journal.ts`), never only in Redis, until PostgreSQL has
 *    it: a flush (every 250 ms and on drain) adds its lookups to this pod's one charge row per
 *    account, lease and UTC day, under the lease, moving no bucket (a retried flush adds nothing twice), with the per-request records (the usage log's outbox, `usage-outbox.ts`).
 *    Settling a lease closes its wallet first (no spending after), writes this pod's journal, then
 *    returns `lease − Σ charges + Σ refunds` in one transaction; it is idempotent and needs nothing
 *    but PostgreSQL, so any pod's reconciler settles the leases of a pod that died (a charge that
 *    arrives after is charged on the buckets, or forgiven). Hence, at every moment:
 *    buckets + unspent lease credit = deposits − Σ charges + Σ refunds (charges still in a journal
 *    count as charges), and after every lease is settled the buckets alone say so.
 *    `X-Credits-Remaining` is the buckets (as PostgreSQL last reported them, with a version so an
 *    older report never wins) plus the wallet's unspent credit, read in the spend's own step (read
 *    whole instead, the lease's part from PostgreSQL, when the wallet lost part of it with Redis). A
 *    window charge (SQL, export) is spent from the same wallet under its window's key, which the
 *    wallet remembers as long as the tracker remembers the charge (a key is never spent twice);
 *    its refund writes its record to the ledger first, then refunds it under its lease.
 *    How much a lease takes is `leaseSize` (`leases.ts`), the one statement of that rule.
 *    A REST lookup first holds its largest cost in its counter call (`credit/holds.ts`): the hold leaves
 *    the spendable credit but stays in the balance (buckets + unspent + held) until its release
 *    writes the true charge to the log and returns the rest; a hold is released exactly once (true
 *    charge, nothing, or forgiven when its pod died or its lease settled without it).
 *    The balance is defined once (`balance`, `readout`): buckets plus the open lease's unspent
 *    credit, and every readout (headers, admin, the dashboard) uses it.
 * 8. Bytes delivered count, however they were split (`bytes-delivered.ts`): for a window over a
 *    file, the distinct bytes its broken responses delivered add up across ranges, downloads and
 *    refunded charges; once they cover half the file the charge stands even though no response
 *    completed. Refunds of charges under which any byte went out are capped per account per UTC
 *    day; past the cap such a charge stands. Both are decided in the tracker's one atomic step.
 */
export { Billing } from './billing.ts';
export type { BalanceReadout, BegunDelivery, Delivery, PaidSqlRead, Payer } from './billing.ts';
export { deliverCharged, holdCredit, holdOf, payerOf, requireCredit, setCreditHeaders } from './http.ts';
export { exportWindow, sqlWindow, windowBaseOf } from './charge-keys.ts';
export { PARTIAL_REFUNDS_PER_DAY, bytesToStand, coveredBytes } from './bytes-delivered.ts';
export type { ByteSpan } from './bytes-delivered.ts';
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
export type { UsageRecord } from './usage-outbox.ts';
export { startBillingLoops } from './loops.ts';
export type { BillingLoops } from './loops.ts';
