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
 * 7. Lookups are off PostgreSQL's per-request path (credit leases: `leases.ts`, `wallet.ts`).
 *    PostgreSQL stays the source of truth: a lease is a ledger row that moves a slice of the
 *    balance out of the buckets (the CHECK constraints still keep them >= 0), and an account has at
 *    most one open lease. A lookup is one atomic wallet step that spends from the lease and logs its
 *    charge record; records reach the ledger in batches (`flush`, every 250 ms and on drain) as
 *    charge rows under the lease that move no bucket. Settling a lease closes its wallet first (no
 *    spending after), writes its log, then returns `lease − Σ charges + Σ refunds` in one
 *    transaction; it is idempotent and needs nothing but PostgreSQL and the shared log, so any pod's
 *    reconciler settles the leases of a pod that died. Hence, at every moment:
 *    buckets + unspent lease credit = deposits − Σ charges + Σ refunds (lookups still in the log
 *    count as charges), and after every lease is settled the buckets alone say so.
 *    `X-Credits-Remaining` is the buckets (as PostgreSQL last reported them, with a version so an
 *    older report never wins) plus the wallet's unspent credit, read in the spend's own step. A
 *    window charge (SQL, export) stays on the ledger; when the buckets are short while a lease holds
 *    credit, the lease is settled and the charge retried, so leased credit is never out of reach.
 *    A lease is sized to about ten seconds of the account's spend and at most half its balance
 *    (all of a balance under forty requests' worth), never more than the balance.
 *    The balance is defined once (`balance`, `readout`): buckets plus the open lease's unspent
 *    credit, and every readout (headers, admin, the dashboard) uses it.
 * 8. Bytes delivered count, however they were split (`bytes-delivered.ts`): for a window over a
 *    file, the distinct bytes its broken responses delivered add up across ranges, downloads and
 *    refunded charges; once they cover half the file the charge stands even though no response
 *    completed. Refunds of charges under which any byte went out are capped per account per UTC
 *    day; past the cap such a charge stands. Both are decided in the tracker's one atomic step.
 */
import { randomUUID } from 'node:crypto';
import type { Tier } from '@uda/shared/catalog';
import type { Logger } from '@uda/shared/logger';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import type { Metrics } from '../metrics.ts';
import { formatUsd } from '../money.ts';
import { type WindowSpec, accountOfChargeKey, lookupChargeKey, sqlQueryPrefix, windowChargeKey } from './charge-keys.ts';
import type { ByteSpan, BytesDelivered } from './bytes-delivered.ts';
import type { DeliveryTracker } from './deliveries.ts';
import { type LeaseBook, leaseSize } from './leases.ts';
import type { BreakdownItem, ChargeResult, Ledger } from './ledger.ts';
import type { Buckets, ChargeRecord, Wallet } from './wallet.ts';

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

/** The one balance (`Billing.balance`) with the bucket each part belongs to. */
export interface BalanceReadout {
  readonly balanceMicro: number;
  readonly grantMicro: number;
  readonly topoffMicro: number;
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
  /**
   * This request made the window's result (a SQL run): it tries the window's first charge key
   * without reading the ledger first (`#deliverFirst`). Only for windows that never age out.
   */
  readonly madeResult?: boolean;
  /**
   * The size of the window's file (an export), whose bytes count (rule 8): a broken response then
   * reports what it delivered (`Delivery.sent`). Undefined: a response delivers all or nothing.
   */
  readonly sizeBytes?: number;
}

/** One response under a window's charge. End it exactly once; later calls do nothing. */
export interface Delivery {
  readonly settlement: Settlement;
  readonly chargeKey: string;
  /** False for a read of a paid window that carries no bytes: its end decides nothing. */
  readonly holdsCharge: boolean;
  complete(): Promise<void>;
  /** The response broke or failed: refunds under rules 2 and 8, and says what the balance is now. */
  abandon(): Promise<Settlement>;
  /** The bytes of the window's file this response has handed to its connection so far (rule 8). */
  sent(span: ByteSpan): void;
}

export interface BillingOptions {
  readonly ledger: Ledger;
  readonly leases: LeaseBook;
  readonly wallet: Wallet;
  readonly deliveries: DeliveryTracker;
  readonly metrics?: Metrics;
  readonly logger?: Logger;
  /** How long an in-flight delivery holds its charge without renewal (renewed at a third of it). */
  readonly deliveryTtlMs?: number;
  /** Milliseconds since the epoch; tests move it to expire a dead pod's deliveries. */
  readonly now?: () => number;
}

const WAIT_FOR_REFUND_MS = 25;
/** DECISIONS §6: a stored SQL result is re-read uncharged for 5 minutes. */
const SQL_RESULT_WINDOW_MS = 5 * 60_000;
const POSITIVE_BALANCE_TTL_MS = 2_000;
const WINDOW_ATTEMPTS = 200;
/** A spend that finds its wallet short takes (or extends) a lease and tries again, this often. */
const SPEND_ATTEMPTS = 5;
/** How long a refund or a settlement waits for another pod's flush of the account (25 ms steps). */
const FLUSH_WAIT_ATTEMPTS = 200;
/** How often pending lookups are written to the ledger. */
const FLUSH_INTERVAL_MS = 250;

export class Billing {
  readonly #ledger: Ledger;
  readonly #leases: LeaseBook;
  readonly #wallet: Wallet;
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
  /** accountId → this pod's last lease for it: how fast the account spends (`leaseSize`). */
  readonly #lastLease = new Map<string, { micro: number; at: number }>();
  /** accountId → the lease this pod is taking for it: concurrent requests wait for one take, not one each. */
  readonly #taking = new Map<string, Promise<void>>();
  #reconciler: NodeJS.Timeout | undefined;
  #flusher: NodeJS.Timeout | undefined;

  constructor(options: BillingOptions) {
    this.#ledger = options.ledger;
    this.#leases = options.leases;
    this.#wallet = options.wallet;
    this.#deliveries = options.deliveries;
    this.#metrics = options.metrics;
    this.#logger = options.logger;
    this.#ttlMs = options.deliveryTtlMs ?? 60_000;
    this.#now = options.now ?? Date.now;
  }

  /**
   * The balance (DECISIONS §3 "One balance"): the buckets in PostgreSQL plus the unspent credit of
   * the open lease. `X-Credits-Remaining` reports it (read here, or in a spend's own step from the
   * same two parts), and so do admin and the dashboard (`readout`).
   */
  async balance(accountId: string): Promise<number> {
    return (await this.#balanceParts(accountId)).balanceMicro;
  }

  /**
   * The balance with its two buckets, for the readouts that show them (admin `account show`, the
   * dashboard's Usage page): each bucket plus the part of the lease's unspent credit that returns to
   * it (the lease spends its grant part first, so what is left is top-off first).
   */
  async readout(accountId: string): Promise<BalanceReadout> {
    const parts = await this.#balanceParts(accountId);
    const lease = parts.unspentMicro ? await this.#leases.openParts(accountId) : undefined;
    const leasedTopoff = Math.min(parts.unspentMicro, lease?.topoffMicro ?? 0);
    return { balanceMicro: parts.balanceMicro, grantMicro: parts.grantMicro + parts.unspentMicro - leasedTopoff, topoffMicro: parts.topoffMicro + leasedTopoff };
  }

  /** The one definition of the balance, with its parts; the buckets go to the wallet for lookups to report. */
  async #balanceParts(accountId: string): Promise<{ balanceMicro: number; grantMicro: number; topoffMicro: number; unspentMicro: number }> {
    const [buckets, unspentMicro] = await Promise.all([this.#readBuckets(accountId), this.#orWhileWalletFails(this.#wallet.unspent(accountId), 0)]);
    return { balanceMicro: buckets.micro + unspentMicro, grantMicro: buckets.grantMicro, topoffMicro: buckets.topoffMicro, unspentMicro };
  }

  /**
   * The balance when a charge's statement reported the buckets it left: they go to the wallet (for
   * lookups to report) while the lease's unspent credit is read, with no PostgreSQL read.
   */
  async #balanceWith(accountId: string, buckets: Buckets): Promise<number> {
    const [, unspent] = await Promise.all([
      this.#orWhileWalletFails(this.#wallet.storeBuckets(accountId, buckets), undefined),
      this.#orWhileWalletFails(this.#wallet.unspent(accountId), 0),
    ]);
    return buckets.micro + unspent;
  }

  /**
   * While the wallet's store fails (Redis down), reads of it answer `fallback`: the balance then
   * leaves out the unspent lease credit (it comes back when the lease settles), and nothing else
   * that needs only PostgreSQL fails with it.
   */
  async #orWhileWalletFails<T>(call: Promise<T>, fallback: T): Promise<T> {
    try {
      return await call;
    } catch (err) {
      this.#logger?.warn({ err }, 'credit wallet unavailable');
      return fallback;
    }
  }

  /** Reads the buckets from PostgreSQL into the wallet, so lookups report them; returns them. */
  async refreshBuckets(accountId: string): Promise<number> {
    return (await this.#readBuckets(accountId)).micro;
  }

  async #readBuckets(accountId: string): Promise<Buckets & { grantMicro: number; topoffMicro: number }> {
    const buckets = await this.#leases.buckets(accountId);
    await this.#orWhileWalletFails(this.#wallet.storeBuckets(accountId, { micro: buckets.micro, version: buckets.version }), undefined);
    return buckets;
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
   * covered), spent from the account's wallet (rule 7). Its one delivery is its response: a
   * response that never went out is refunded.
   */
  async deliverOnce(payer: Payer, spec: ChargeSpec): Promise<Delivery> {
    const chargeKey = lookupChargeKey(payer.accountId);
    const charge = await this.#chargeLookup(payer, { key: chargeKey, amountMicro: spec.costMicro, breakdown: spec.breakdown, requestId: spec.requestId, queryId: spec.queryId }, spec);
    const { settlement } = charge;
    let ended = false;
    return {
      settlement,
      chargeKey,
      holdsCharge: true,
      complete: async () => {
        ended = true;
      },
      abandon: async () => {
        const refunded = ended || !settlement.chargedMicro ? 0 : await this.track(charge.refund());
        ended = true;
        return { chargedMicro: 0, balanceMicro: settlement.balanceMicro + refunded };
      },
      sent: () => undefined,
    };
  }

  /**
   * Spends a lookup from the wallet. While the wallet's store fails (Redis down), the lookup is
   * charged in the ledger directly, as before leases: slower, never free.
   */
  async #chargeLookup(payer: Payer, record: ChargeRecord, spec: ChargeSpec): Promise<{ settlement: Settlement; refund(): Promise<number> }> {
    if (!record.amountMicro) return { settlement: { chargedMicro: 0, balanceMicro: await this.balance(payer.accountId) }, refund: async () => 0 };
    try {
      return { settlement: await this.#spend(payer, record, spec), refund: () => this.#unspend(payer.accountId, record.key) };
    } catch (error) {
      if (error instanceof ApiError) throw error;
      this.#logger?.warn({ err: error }, 'credit wallet unavailable: the lookup is charged in the ledger directly');
      return { settlement: await this.#chargeDirect(payer, record, spec), refund: () => this.#writeRefund(record.key) };
    }
  }

  async #chargeDirect(payer: Payer, record: ChargeRecord, spec: ChargeSpec): Promise<Settlement> {
    const result = await this.#ledger.charge({ ...record, accountId: payer.accountId, idempotencyKey: record.key });
    this.#rememberPositive(payer.accountId, result.balanceMicro);
    if (!result.ok) throw insufficientCredit(result.balanceMicro, record.amountMicro);
    this.#counted(payer, spec, result.chargedMicro);
    return { chargedMicro: result.chargedMicro, balanceMicro: result.balanceMicro };
  }

  /** One script call when the wallet covers the cost; otherwise a lease from PostgreSQL first. */
  async #spend(payer: Payer, record: ChargeRecord, spec: ChargeSpec): Promise<Settlement> {
    for (let attempt = 0; attempt < SPEND_ATTEMPTS; attempt++) {
      const spent = await this.#wallet.spend(payer.accountId, record);
      if (spent.ok) {
        const buckets = spent.bucketsMicro ?? (await this.refreshBuckets(payer.accountId));
        const charged = spent.duplicate ? 0 : record.amountMicro;
        this.#counted(payer, spec, charged);
        this.#rememberPositive(payer.accountId, buckets + spent.unspentMicro);
        this.#refillEarly(payer.accountId, spent.unspentMicro, record.amountMicro);
        return { chargedMicro: charged, balanceMicro: buckets + spent.unspentMicro };
      }
      // A closed wallet's lease is being settled (or its settler died): finish that first.
      if (spent.closedLeaseId) await this.settleLease(payer.accountId, spent.closedLeaseId);
      const inFlight = this.#taking.get(payer.accountId);
      // Another request of this pod is taking a lease: spend from it, or take one for this cost after it.
      if (inFlight) await inFlight.catch(() => undefined);
      else await this.#takeLease(payer.accountId, record.amountMicro, record.amountMicro);
    }
    throw new ApiError(ErrorCode.QUERY_BACKEND_UNAVAILABLE, {}, { 'Retry-After': '1' });
  }

  /** Extends the lease in the background when a quarter of the last slice is left, so requests rarely wait for PostgreSQL. */
  #refillEarly(accountId: string, unspentMicro: number, costMicro: number): void {
    const last = this.#lastLease.get(accountId);
    if (!last || unspentMicro >= last.micro / 4 || this.#taking.has(accountId)) return;
    // A 402 here only means the balance is nearly spent: no more early takes (the next request that
    // can't be covered takes its own, and gets the 402).
    const refused = (error: unknown) => {
      if (!(error instanceof ApiError)) throw error;
      this.#lastLease.delete(accountId);
    };
    void this.track(this.#takeLease(accountId, costMicro, last.micro / 4).catch(refused)).catch(() => undefined);
  }

  /** One lease take per account at a time in this pod; none while the wallet holds `enoughMicro`. */
  #takeLease(accountId: string, costMicro: number, enoughMicro: number): Promise<void> {
    const taking = this.#takeLeaseNow(accountId, costMicro, enoughMicro).finally(() => this.#taking.delete(accountId));
    this.#taking.set(accountId, taking);
    return taking;
  }

  /** Moves a slice of the balance into the account's lease and its wallet; 402 when even `costMicro` is not there. */
  async #takeLeaseNow(accountId: string, costMicro: number, enoughMicro: number): Promise<void> {
    // A request that found the wallet short may get here after another take (of this pod or
    // another) refilled it. Taking again would move more of the balance out of the buckets, up to
    // half of what is left each time: a burst of such takes drained the buckets, and a lookup got a
    // 402 while the wallet held the whole balance.
    if ((await this.#wallet.unspent(accountId)) >= enoughMicro) return;
    const now = this.#now();
    const last = this.#lastLease.get(accountId);
    // At least a second between takes in the estimate: a lease grows at most tenfold per take.
    const spendPerSecondMicro = last ? (1_000 * last.micro) / Math.max(1_000, now - last.at) : 0;
    const taken = await this.#leases.take(accountId, (balanceMicro) => leaseSize({ costMicro, spendPerSecondMicro, balanceMicro }), costMicro);
    if (!taken.ok) {
      await this.#wallet.storeBuckets(accountId, taken.buckets);
      throw insufficientCredit(taken.buckets.micro + (await this.#wallet.unspent(accountId)), costMicro);
    }
    await this.#wallet.fund(accountId, taken.leaseId, taken.addedMicro, taken.buckets);
    if (this.#lastLease.size >= 10_000) this.#lastLease.clear();
    this.#lastLease.set(accountId, { micro: taken.addedMicro, at: now });
  }

  /**
   * Refunds a lookup whose response never went out: from the pending log when it is still there,
   * else in the ledger. While another pod flushes the account, the record may be on its way to the
   * ledger, so it waits for that flush to end.
   */
  async #unspend(accountId: string, chargeKey: string): Promise<number> {
    for (let attempt = 0; attempt < FLUSH_WAIT_ATTEMPTS; attempt++) {
      const result = await this.#wallet.unspend(accountId, chargeKey);
      if (typeof result === 'number') {
        this.#metrics?.refunds.inc();
        return result;
      }
      if (result === 'written') return this.#refundLeaseCharge(chargeKey);
      await sleep(WAIT_FOR_REFUND_MS);
    }
    // The flusher's pod died holding the lock: the charge stands, as when a lookup's own pod dies (rule 2).
    return 0;
  }

  /** Refunds a lookup's charge that reached the ledger (an operator's refund, or a broken response's); once. */
  refundLookup(chargeKey: string): Promise<number> {
    return this.#refundLeaseCharge(chargeKey);
  }

  /** Settles the account's open lease now, if it has one (an operator's balance change, a test). */
  async settleOpenLease(accountId: string): Promise<void> {
    const leaseId = await this.#leases.open(accountId);
    if (leaseId) await this.settleLease(accountId, leaseId);
  }

  async #refundLeaseCharge(chargeKey: string): Promise<number> {
    const refund = await this.#leases.refund(chargeKey);
    if (!refund?.refundedMicro) return 0;
    this.#metrics?.refunds.inc();
    if (refund.leaseOpen) await this.#wallet.credit(refund.accountId, refund.leaseId, refund.refundedMicro);
    await this.#wallet.storeBuckets(refund.accountId, refund.buckets);
    return refund.refundedMicro;
  }

  /**
   * Settles a lease (rule 7): closes its wallet so nothing more is spent on it, writes its pending
   * lookups, then returns the unspent credit in one transaction. Any pod may settle any lease, any
   * number of times.
   */
  async settleLease(accountId: string, leaseId: string): Promise<void> {
    await this.#wallet.close(accountId, leaseId);
    await this.#flushAccount(accountId, FLUSH_WAIT_ATTEMPTS);
    const settled = await this.#leases.settle(leaseId);
    if (settled) await this.#wallet.storeBuckets(accountId, settled.buckets);
  }

  /** Writes every account's pending lookups to the ledger (an account another pod is flushing is skipped). */
  async flush(): Promise<void> {
    for (const accountId of await this.#wallet.pendingAccounts()) await this.#flushAccount(accountId, 1);
  }

  async #flushAccount(accountId: string, attempts: number): Promise<void> {
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (await this.#wallet.flush(accountId, (records) => this.#leases.writeCharges(records))) return;
      if (attempt + 1 < attempts) await sleep(WAIT_FOR_REFUND_MS);
    }
    if (attempts > 1) throw new Error(`the flush lock of account ${accountId} stayed taken`);
  }

  /**
   * Whether the payer paid for a stored result of this query in the last 5 minutes: a hint that the
   * request is a re-read (rule 4), never a charge decision. `deliverWindow` still decides the charge.
   */
  paidSqlResult(payer: Payer, queryId: string): Promise<boolean> {
    return this.#ledger.paidSince(payer.accountId, sqlQueryPrefix(payer.accountId, queryId), SQL_RESULT_WINDOW_MS);
  }

  /**
   * A response under a window's charge (a SQL result, an export file). Registers the delivery
   * before charging, so no other delivery's break can refund the charge this one stands on; then
   * charges when the window is not paid yet. When the window's charge is being refunded, it waits
   * for the refund and charges under the next key.
   */
  async deliverWindow(payer: Payer, window: WindowSpec, options: WindowOptions): Promise<Delivery> {
    const first = options.madeResult && options.carriesBytes && window.lengthMs === undefined ? await this.#deliverFirst(payer, window, options) : undefined;
    if (first) return first;
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
        settlement = current.paid ? { chargedMicro: 0, balanceMicro: await this.balance(payer.accountId) } : (await this.#chargeWindow(payer, current.key, options)).settlement;
      } catch (error) {
        await this.#deliveries.release(current.key, id);
        throw error;
      }
      return this.#delivery(current.key, id, settlement, options.sizeBytes);
    }
    throw new ApiError(ErrorCode.QUERY_BACKEND_UNAVAILABLE, {}, { 'Retry-After': '1' });
  }

  /**
   * The window of a result this request just made almost always has no charge yet, so its first key
   * is taken without the ledger read: the tracker refuses the delivery if that key is being or was
   * refunded, and the charge's idempotency key makes it a no-op if another delivery of the result
   * charged first (then that charge stands: this delivery now holds it, so it cannot be refunded).
   * A duplicate is checked against the ledger too, for a tracker that fell back to this process
   * (Redis down) and cannot know another pod's refund. Undefined: fall back to the ledger read.
   */
  async #deliverFirst(payer: Payer, window: WindowSpec, options: WindowOptions): Promise<Delivery | undefined> {
    const key = windowChargeKey(window.base, 0);
    const id = randomUUID();
    if (!(await this.#deliveries.begin(key, id, this.#now() + this.#ttlMs))) return undefined;
    try {
      const { settlement, duplicate } = await this.#chargeWindow(payer, key, options);
      if (duplicate && (await this.#ledger.refunded(key))) {
        await this.#deliveries.release(key, id);
        return undefined;
      }
      return this.#delivery(key, id, settlement, options.sizeBytes);
    } catch (error) {
      await this.#deliveries.release(key, id);
      throw error;
    }
  }

  /** `duplicate`: the key was charged already (by another delivery), so this one reports 0. */
  async #chargeWindow(payer: Payer, key: string, options: WindowOptions): Promise<{ settlement: Settlement; duplicate: boolean }> {
    // A result that reads no source row costs nothing and leaves no ledger row: only the balance to report.
    if (options.costMicro === 0) return { settlement: { chargedMicro: 0, balanceMicro: await this.balance(payer.accountId) }, duplicate: false };
    const undo = await options.beforeCharge?.();
    const result = await this.#chargeLedger(payer.accountId, key, options).catch(async (error: unknown) => {
      await undo?.();
      throw error;
    });
    const balanceMicro = result.ok && result.buckets ? await this.#balanceWith(payer.accountId, result.buckets) : await this.balance(payer.accountId);
    this.#rememberPositive(payer.accountId, balanceMicro);
    if (!result.ok) {
      await undo?.();
      throw insufficientCredit(balanceMicro, options.costMicro);
    }
    // A concurrent request inserted the same key first: that response reports the charge (rule 3).
    const charged = result.duplicate ? 0 : result.chargedMicro;
    if (result.duplicate) await undo?.();
    this.#counted(payer, options, charged);
    return { settlement: { chargedMicro: charged, balanceMicro }, duplicate: result.duplicate };
  }

  /** A window's charge on the buckets; when they are short while a lease holds credit, the lease is settled and the charge tried again. */
  async #chargeLedger(accountId: string, key: string, spec: ChargeSpec): Promise<ChargeResult> {
    const request = { accountId, amountMicro: spec.costMicro, idempotencyKey: key, breakdown: spec.breakdown, requestId: spec.requestId, queryId: spec.queryId };
    const first = await this.#ledger.charge(request);
    if (first.ok || !(await this.#leases.open(accountId))) return first;
    await this.settleOpenLease(accountId);
    return this.#ledger.charge(request);
  }

  async #freeRead(payer: Payer, key: string): Promise<Delivery> {
    const settlement = { chargedMicro: 0, balanceMicro: await this.balance(payer.accountId) };
    return { settlement, chargeKey: key, holdsCharge: false, complete: async () => undefined, abandon: async () => settlement, sent: () => undefined };
  }

  /** A registered delivery, renewed while it runs, ended once; of a file of `sizeBytes`, it reports the bytes it sent. */
  #delivery(chargeKey: string, id: string, settlement: Settlement, sizeBytes: number | undefined): Delivery {
    let ended = false;
    let span: ByteSpan | undefined;
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
        const delivered = sizeBytes === undefined || !span ? undefined : { span, sizeBytes };
        const refunded = end() ? await this.track(this.#abandon(chargeKey, id, delivered)) : 0;
        return { chargedMicro: 0, balanceMicro: settlement.balanceMicro + refunded };
      },
      sent: (bytes) => {
        span = bytes;
      },
    };
    this.#open.add(delivery);
    return delivery;
  }

  async #abandon(chargeKey: string, id: string, delivered: BytesDelivered | undefined): Promise<number> {
    if (!(await this.#deliveries.abandon(chargeKey, id, this.#now(), delivered))) return 0;
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
    if (refunded) {
      this.#metrics?.refunds.inc();
      await this.refreshBuckets(accountOfChargeKey(chargeKey));
    }
    return refunded;
  }

  /**
   * Refunds the charges whose deliveries all died with their pod (rule 2) and settles the leases
   * past their expiry (rule 7), whichever pod took them; run by every pod. Returns the refunds.
   */
  async reconcile(): Promise<number> {
    const reaped = await this.#deliveries.reap(this.#now());
    for (const chargeKey of reaped) await this.#refund(chargeKey);
    // One account whose flush lock a dead pod still holds (until the lock lapses) must not hold back
    // every other lease: each settles on its own, and the failures are reported after the pass.
    const failures: unknown[] = [];
    for (const lease of await this.#leases.expired()) await this.settleLease(lease.accountId, lease.leaseId).catch((error: unknown) => failures.push(error));
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1) throw new AggregateError(failures, `${failures.length} expired leases could not be settled yet`);
    return reaped.length;
  }

  /** The reconciler every `intervalMs`, and the flush of pending lookups every 250 ms. */
  startReconciler(intervalMs: number): void {
    // `track` logs a failure; the next turn tries again.
    const quietly = (work: () => Promise<unknown>) => () => void this.track(work()).catch(() => undefined);
    this.#reconciler = setInterval(quietly(() => this.reconcile()), intervalMs);
    this.#reconciler.unref();
    this.#flusher = setInterval(quietly(() => this.flush()), FLUSH_INTERVAL_MS);
    this.#flusher.unref();
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
   * Resolves once every billing write this pod keeps alive past its response (refunds, completions,
   * an early lease extension) has ended: a readout after it sees no half-made move of credit.
   */
  async writesDone(): Promise<void> {
    while (this.#pending.size) await Promise.all([...this.#pending]);
  }

  /**
   * Graceful shutdown, after the server closed its connections: waits for the cut responses to end
   * their deliveries (a socket's close event comes a few loop turns later), abandons any still open
   * after `waitMs` (their connections are gone; each reports the bytes it had sent), and waits for every
   * refund and completion to be written. Then writes the pending lookups, and settles the leases
   * of a wallet that lives in this process (a Redis wallet's leases stay for the other pods).
   */
  async drain(waitMs = 2_000): Promise<void> {
    clearInterval(this.#reconciler);
    clearInterval(this.#flusher);
    for (const until = Date.now() + waitMs; this.#open.size && Date.now() < until; ) await sleep(10);
    await Promise.allSettled([...this.#open].map((delivery) => delivery.abandon()));
    await this.writesDone();
    // Without Redis, what stays pending is flushed by the next pod (the lock and the log are in Redis).
    await this.#orWhileWalletFails(this.flush(), undefined);
    if (this.#wallet.local) for (const lease of await this.#wallet.openLeases()) await this.settleLease(lease.accountId, lease.leaseId);
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
