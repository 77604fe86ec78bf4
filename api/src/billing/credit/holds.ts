/**
 * Holds (DECISIONS §3 "Holds"; rules in `wallet.ts`): a lookup holds its largest possible cost in
 * the same Redis call that decides its limits, and releases the difference once its rows are known.
 * The release never costs a round trip of its own: it waits in this pod's queue
 * (`release-queue.ts`) for the next counter call or flush. A wallet that lives in this process
 * holds and releases in place, at no cost.
 *
 * Money: a hold leaves the spendable credit and stays part of the balance, so concurrent holds can
 * never spend more than the lease and every readout agrees. The response reports the balance after
 * its true charge (`Hold.balanceMicro` less the charge), and the charge itself goes to this pod's
 * journal under the hold's lease (`journal.ts`), so a release lost with Redis loses no charge. A
 * request that fails releases the whole hold. If this pod dies before its queue left, the holds
 * expire and any pod's reconciler releases them as charging nothing (their charges died with the
 * pod's journal: forgiven).
 */
import type { Hold, HoldPlan, Payer, Settlement } from '../types.ts';
import type { ChargeRecord, HoldRequest, HoldResult, Wallet } from '../wallet.ts';
import type { Balances } from './balances.ts';
import type { LeaseTakes } from './lease-takes.ts';
import type { Readouts } from './readouts.ts';
import type { ReleaseQueue } from './release-queue.ts';

export interface HoldsOptions {
  readonly wallet: Wallet;
  readonly releases: ReleaseQueue;
  readonly balances: Balances;
  readonly readouts: Readouts;
  /** Refills the wallet after each hold attempt (`LeaseTakes.afterHold`). */
  readonly takes: LeaseTakes;
  /** How long a hold lives without its release. */
  readonly ttlMs: number;
  readonly now: () => number;
}

export class Holds {
  readonly #o: HoldsOptions;
  /** Holds whose release (true charge or nothing) has been decided. */
  readonly #settled = new WeakSet<Hold>();

  constructor(options: HoldsOptions) {
    this.#o = options;
  }

  /** A hold of `maxMicro` under `key` for the payer's request; carries this pod's queued releases. */
  plan(payer: Payer, key: string, maxMicro: number): HoldPlan {
    const { wallet, now, ttlMs } = this.#o;
    const request = { key, amountMicro: maxMicro, expiresAtMs: now() + ttlMs };
    if (wallet.local) return { rider: undefined, made: async () => this.#held(payer.accountId, request, await wallet.hold(payer.accountId, request)) };
    const batch = this.#o.releases.take();
    const rider = wallet.holdRider(payer.accountId, request, batch.releases);
    return {
      rider,
      made: async (reply) => {
        // No reply: Redis was not asked, or failed; the releases go again (a release is idempotent).
        if (reply === undefined) return void batch.failed();
        batch.sent();
        return this.#held(payer.accountId, request, wallet.holdReply(reply));
      },
    };
  }

  async #held(accountId: string, request: HoldRequest, result: HoldResult): Promise<Hold | undefined> {
    // An account with no lease yet takes its first one when it is charged, as without holds.
    if (result.ok || result.leased) this.#o.takes.afterHold(accountId, result.ok, result.ok ? result.unspentMicro : 0, request.amountMicro);
    if (!result.ok) return undefined;
    const balance = this.#balanceWithHold(accountId, result);
    return { accountId, key: request.key, leaseId: result.leaseId, heldMicro: request.amountMicro, balanceMicro: typeof balance === 'number' ? balance : await balance };
  }

  /**
   * The balance with the hold in it: from the hold's own step, unless the wallet lost part of its
   * lease (then read whole). A number when the step had it all: no promise on every held request.
   */
  #balanceWithHold(accountId: string, held: Extract<HoldResult, { ok: true }>): number | Promise<number> {
    if (!held.whole) return this.#o.readouts.balance(accountId);
    const rest = held.unspentMicro + held.heldMicro;
    if (held.bucketsMicro !== undefined) return held.bucketsMicro + rest;
    return this.#o.balances.refreshBuckets(accountId).then((buckets) => buckets + rest);
  }

  /**
   * The true charge is known: queues the release and answers what the response reports (the caller
   * puts the charge in the journal). Undefined when the charge is above the hold (never, by
   * construction): the hold is released whole and the caller charges the usual way.
   */
  async settle(hold: Hold, record: ChargeRecord): Promise<Settlement | undefined> {
    if (record.amountMicro > hold.heldMicro) {
      await this.release(hold);
      return undefined;
    }
    const releasing = this.#enqueue(hold, record);
    if (releasing) await releasing;
    return { chargedMicro: record.amountMicro, balanceMicro: hold.balanceMicro - record.amountMicro };
  }

  /** Whether the hold's release (its charge, or nothing) is decided: a settled hold needs no `release`. */
  settled(hold: Hold): boolean {
    return this.#settled.has(hold);
  }

  /** The request failed before its charge: the whole hold goes back (once settled, nothing to do). */
  async release(hold: Hold): Promise<void> {
    if (!this.#settled.has(hold)) await this.#enqueue(hold, { key: hold.key, amountMicro: 0 });
  }

  /** Releases, charging nothing, the holds whose pod died (the reconciler): their charges died with that pod's journal. */
  async reap(): Promise<string[]> {
    return this.#o.wallet.reapHolds(this.#o.now());
  }

  /** Queues the hold's release; a wallet in this process releases in place (the promise), with no round trip to save. */
  #enqueue(hold: Hold, record: ChargeRecord): Promise<void> | undefined {
    this.#settled.add(hold);
    if (this.#o.wallet.local) return this.#o.wallet.release([{ accountId: hold.accountId, record }]);
    this.#o.releases.add(hold, record);
    return undefined;
  }
}
