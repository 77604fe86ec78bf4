/**
 * Window charges (rules 2 to 5 and 8 in `index.ts`): one charge covers every response under a
 * window (a SQL result's, an export file's 24 h), each response registered as a delivery before
 * anything is charged, renewed while it runs and ended exactly once. A broken delivery's refund is
 * decided in `refunds.ts`.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import type { Metrics } from '../metrics.ts';
import type { Delivery, PaidSqlRead, Payer, Settlement, WindowOptions } from './types.ts';
import type { ByteSpan } from './bytes-delivered.ts';
import { type WindowSpec, windowBaseOf, windowChargeKey } from './charge-keys.ts';
import { DELIVERY_STATE_TTL_MS, type DeliveryTracker } from './deliveries.ts';
import type { Credit } from './credit/index.ts';
import type { Ledger } from './ledger.ts';
import type { PendingWrites } from './pending-writes.ts';
import type { Refunds } from './refunds.ts';

/** DECISIONS §6: a stored SQL result is re-read uncharged for 5 minutes. */
const SQL_RESULT_WINDOW_MS = 5 * 60_000;
const WINDOW_ATTEMPTS = 200;
/** How long a window waits between tries while its charge is being refunded. */
const WAIT_FOR_REFUND_MS = 25;

export interface WindowChargesOptions {
  readonly ledger: Ledger;
  readonly deliveries: DeliveryTracker;
  readonly credit: Credit;
  readonly refunds: Refunds;
  readonly writes: PendingWrites;
  readonly metrics?: Metrics;
  /** How long an in-flight delivery holds its charge without renewal (renewed at a third of it). */
  readonly ttlMs: number;
  readonly now: () => number;
}

export class WindowCharges {
  readonly #o: WindowChargesOptions;
  /** Deliveries not ended yet: SIGTERM waits for their responses to close, then ends the rest. */
  readonly #open = new Set<Delivery>();

  constructor(options: WindowChargesOptions) {
    this.#o = options;
  }

  /** The deliveries not ended yet. */
  get open(): ReadonlySet<Delivery> {
    return this.#open;
  }

  /**
   * Whether the payer paid for a stored result of this query in the last 5 minutes: a hint that the
   * request is a re-read (rule 4), never a charge decision. `deliver` still decides the charge. It
   * reads the re-read marker the charge's spend set (one Redis read, no PostgreSQL): a marker lost
   * with Redis's data only sends the request the way of a new run, which passes the daily cap.
   */
  paidSqlResult(payer: Payer, queryId: string): Promise<string | undefined> {
    return this.#o.credit.paidMarker(payer.accountId, queryId);
  }

  /**
   * `paidSqlResult` in the request's counter call: with a marker, the same script begins the
   * response's delivery on the charge it names and reads the balance to report (`reread-rider.ts`),
   * so a paid re-read makes no other round trip. Without a tracker on Redis, the marker alone. A
   * begun delivery whose reply was lost (Redis failed after running it) expires in flight by itself.
   */
  paidSqlRead(payer: Payer, queryId: string): PaidSqlRead {
    const deliveryId = randomUUID();
    const begin = this.#o.deliveries.beginRider?.(deliveryId, this.#o.now() + this.#o.ttlMs);
    const rider = this.#o.credit.paidMarkerRider(payer.accountId, queryId, begin);
    return {
      rider,
      read: (reply) => {
        const read = rider?.read(reply);
        if (!read) return undefined;
        const begun = read.begun ? { deliveryId, ...(read.balanceMicro === undefined ? {} : { balanceMicro: read.balanceMicro }) } : undefined;
        return { ...(read.paidKey === undefined ? {} : { paidKey: read.paidKey }), ...(begun ? { begun } : {}) };
      },
      release: (paidKey, begun) => this.#o.deliveries.release(paidKey, begun.deliveryId),
    };
  }

  /**
   * A response under a window's charge (a SQL result, an export file). Registers the delivery
   * before charging, so no other delivery's break can refund the charge this one stands on; then
   * charges when the window is not paid yet. When the window's charge is being refunded, it waits
   * for the refund and charges under the next key.
   */
  async deliver(payer: Payer, window: WindowSpec, options: WindowOptions): Promise<Delivery> {
    const begun = await this.#begunRead(payer, window, options);
    if (begun) return begun;
    const first = options.madeResult && options.carriesBytes && window.lengthMs === undefined ? await this.#deliverFirst(payer, window, options) : undefined;
    if (first) return first;
    for (let attempt = 0; attempt < WINDOW_ATTEMPTS; attempt++) {
      // The marker this request read already serves the first look; a retry (a refund was under way) reads it anew.
      const marked = attempt === 0 && options.paidKey !== undefined ? options.paidKey : await this.#marker(payer, options.queryId);
      const current = await this.#window(payer, window, marked);
      if (current.paid && !options.carriesBytes) return this.#freeRead(payer, current.key);
      const id = randomUUID();
      // A paid window's balance readout goes in the begin's round trip (it does not depend on it).
      const [begun, readout] = await Promise.all([this.#begin(current.key, id), current.paid ? this.#uncharged(payer) : undefined]);
      if (!begun) {
        await sleep(WAIT_FOR_REFUND_MS);
        continue;
      }
      let settlement: Settlement;
      try {
        settlement = readout ?? (await this.#charge(payer, current.key, options)).settlement;
      } catch (error) {
        await this.#release(payer, current.key, id);
        throw error;
      }
      return this.#delivery(current.key, id, settlement, options.sizeBytes, current.paid);
    }
    throw new ApiError(ErrorCode.QUERY_BACKEND_UNAVAILABLE, {}, { 'Retry-After': '1' });
  }

  /**
   * The delivery a paid re-read's first call began (`paidSqlRead`), when its marker's charge is this
   * window's and the response carries bytes. Otherwise that delivery is ended, deciding nothing (not
   * awaited: it leaves in the write of the steps that follow), and the window is found as before.
   */
  async #begunRead(payer: Payer, window: WindowSpec, options: WindowOptions): Promise<Delivery | undefined> {
    const { begun, paidKey } = options;
    if (!begun || paidKey === undefined) return undefined;
    if (!options.carriesBytes || windowBaseOf(paidKey) !== window.base) {
      void this.#o.writes.track(this.#o.deliveries.release(paidKey, begun.deliveryId));
      return undefined;
    }
    const balanceMicro = begun.balanceMicro ?? (await this.#uncharged(payer)).balanceMicro;
    return this.#delivery(paidKey, begun.deliveryId, { chargedMicro: 0, balanceMicro }, options.sizeBytes, true);
  }

  /**
   * The window's charge: a SQL result's from its re-read marker when the marker names a charge of
   * this window (a refund removes the marker first, and the tracker refuses a delivery on a key
   * being refunded). Otherwise from the ledger; a charge spent in the last flush interval is still
   * in the wallet's log (its key is remembered), so the window is paid though the ledger does not
   * show it yet. A refunded or aged-out charge moves the ledger to the next key, never spent.
   */
  async #window(payer: Payer, window: WindowSpec, marked: string | undefined): Promise<{ key: string; paid: boolean }> {
    if (marked !== undefined && windowBaseOf(marked) === window.base) return { key: marked, paid: true };
    const current = await this.#o.ledger.window(payer.accountId, window);
    if (current.paid) return current;
    return { key: current.key, paid: await this.#o.credit.spent(payer.accountId, current.key) };
  }

  /** The charge key a SQL result's re-read marker names (no marker for other windows). */
  async #marker(payer: Payer, queryId: string | undefined): Promise<string | undefined> {
    return queryId === undefined ? undefined : this.#o.credit.paidMarker(payer.accountId, queryId);
  }

  #begin(chargeKey: string, id: string): Promise<boolean> {
    return this.#o.deliveries.begin(chargeKey, id, this.#o.now() + this.#o.ttlMs);
  }

  async #uncharged(payer: Payer): Promise<Settlement> {
    return { chargedMicro: 0, balanceMicro: await this.#o.credit.reported(payer.accountId) };
  }

  /**
   * The window of a result this request just made almost always has no charge yet, so its first key
   * is taken without the ledger read: the tracker refuses the delivery if that key is being or was
   * refunded, and the charge's idempotency key makes it a no-op if another delivery of the result
   * charged first (then that charge stands: this delivery now holds it, so it cannot be refunded).
   * A duplicate is checked against the ledger too, for a tracker that fell back to this process
   * (Redis down) and cannot know another pod's refund. Undefined: fall back to the ledger read.
   * The begin and the spend leave in one write (one round trip), the begin first, so Redis registers
   * the delivery before the charge; a key the tracker refuses was spent before, so the wallet
   * remembers it and the spend is a duplicate (`#refusedFirst` undoes one that was not).
   */
  async #deliverFirst(payer: Payer, window: WindowSpec, options: WindowOptions): Promise<Delivery | undefined> {
    const key = windowChargeKey(window.base, 0);
    const id = randomUUID();
    const beginning = this.#begin(key, id);
    const charging = this.#charge(payer, key, options);
    charging.catch(() => undefined);
    if (!(await beginning)) return this.#refusedFirst(payer, key, options, charging);
    try {
      const { settlement, duplicate } = await charging;
      if (duplicate && (await this.#o.ledger.refunded(key))) {
        await this.#o.deliveries.release(key, id);
        return undefined;
      }
      return this.#delivery(key, id, settlement, options.sizeBytes);
    } catch (error) {
      await this.#release(payer, key, id);
      throw error;
    }
  }

  /**
   * The tracker refused the first key (it is being or was refunded) while its spend went out in the
   * same write. That spend found the key remembered, a duplicate; should the wallet have forgotten
   * it (its data lost), the charge and the marker it set are taken back, as no delivery stands on it.
   */
  async #refusedFirst(payer: Payer, key: string, options: WindowOptions, charging: Promise<{ duplicate: boolean; settlement: Settlement }>): Promise<undefined> {
    const charged = await charging.then(
      ({ duplicate, settlement }) => !duplicate && settlement.chargedMicro > 0,
      () => false,
    );
    if (!charged) return undefined;
    if (options.queryId !== undefined) await this.#o.credit.forgetPaid(payer.accountId, options.queryId);
    await this.#o.credit.refund(payer.accountId, key);
    return undefined;
  }

  /**
   * A delivery whose charge failed (a 402, the store) never carried the charge: it is released,
   * deciding nothing. But another delivery may have spent the key meanwhile (its lease take made
   * this one's find the balance empty) and broken while this one was in flight, leaving the charge
   * with no delivery to decide it. So when the key was spent, a probe delivery begins and breaks at
   * once: the tracker refunds exactly when nothing is in flight and nothing completed (rule 2).
   */
  async #release(payer: Payer, key: string, id: string): Promise<void> {
    await this.#o.deliveries.release(key, id);
    if (!(await this.#o.credit.spent(payer.accountId, key))) return;
    const probe = randomUUID();
    if (await this.#begin(key, probe)) await this.#o.writes.track(this.#o.refunds.abandon(key, probe, undefined));
  }

  /**
   * `duplicate`: the key was charged already (by another delivery), so this one reports 0. The
   * charge is spent from the account's wallet, as a lookup's (rule 7; DECISIONS §3 "SQL windows may
   * be charged through the same wallet"): no PostgreSQL statement on the request's path; the flush
   * writes its ledger row. The wallet remembers the key as long as the tracker remembers the
   * charge, so a key is never spent twice, even after its record left the log.
   */
  async #charge(payer: Payer, key: string, options: WindowOptions): Promise<{ settlement: Settlement; duplicate: boolean }> {
    const marker = options.queryId === undefined ? undefined : { name: options.queryId, ttlMs: SQL_RESULT_WINDOW_MS };
    // A result that reads no source row costs nothing and leaves no ledger row: only the marker
    // (its re-reads are re-reads) and the balance to report.
    if (options.costMicro === 0) {
      if (marker) await this.#o.credit.markPaid(payer.accountId, marker, key);
      return { settlement: await this.#uncharged(payer), duplicate: false };
    }
    const undo = await options.beforeCharge?.();
    const record = { key, amountMicro: options.costMicro, breakdown: options.breakdown, requestId: options.requestId, queryId: options.queryId };
    // The spend sets the re-read marker in the same script (no round trip of its own).
    const { settlement } = await this.#o.credit.charge(payer, record, options, DELIVERY_STATE_TTL_MS, marker).catch(async (error: unknown) => {
      await undo?.();
      throw error;
    });
    // A concurrent request spent the same key first: that response reports the charge (rule 3).
    const duplicate = settlement.chargedMicro === 0;
    if (duplicate) await undo?.();
    return { settlement, duplicate };
  }

  async #freeRead(payer: Payer, key: string): Promise<Delivery> {
    const settlement = await this.#uncharged(payer);
    return { settlement, chargeKey: key, holdsCharge: false, complete: async () => undefined, abandon: async () => settlement, sent: () => undefined };
  }

  /**
   * A registered delivery, renewed while it runs, ended once; of a file of `sizeBytes`, it reports
   * the bytes it sent. Under a charge paid before it (`paidBefore`, a re-read), its end leaves with
   * the pod's next Redis call (at most 250 ms later): meanwhile it still counts as in flight, which
   * only keeps the charge from a refund. A pod killed meanwhile leaves it to expire in flight; then
   * the charge stands if another delivery under it completed, or is refunded: never charged twice.
   */
  #delivery(chargeKey: string, id: string, settlement: Settlement, sizeBytes: number | undefined, paidBefore = false): Delivery {
    const { deliveries, writes, refunds, ttlMs, now } = this.#o;
    let ended = false;
    let span: ByteSpan | undefined;
    const heartbeat = setInterval(() => void writes.track(deliveries.touch(chargeKey, id, now() + ttlMs)), Math.ceil(ttlMs / 3));
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
        if (end()) await writes.track(deliveries.complete(chargeKey, id, paidBefore));
      },
      abandon: async () => {
        const delivered = sizeBytes === undefined || !span ? undefined : { span, sizeBytes };
        const refunded = end() ? await writes.track(refunds.abandon(chargeKey, id, delivered)) : 0;
        return { chargedMicro: 0, balanceMicro: settlement.balanceMicro + refunded };
      },
      sent: (bytes) => {
        span = bytes;
      },
    };
    this.#open.add(delivery);
    return delivery;
  }
}
