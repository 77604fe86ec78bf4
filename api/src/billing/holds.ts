/**
 * Holds (DECISIONS §3 "Holds"; rules in `wallet.ts`): a lookup holds its largest possible cost in
 * the same Redis call that decides its limits, and releases the difference once its rows are known.
 * The release never costs a round trip of its own: this pod queues it, and the next counter call it
 * makes (any account's) or the next flush (every 250 ms) carries the queue. A wallet that lives in
 * this process holds and releases in place, at no cost.
 *
 * Money: a hold leaves the spendable credit and stays part of the balance, so concurrent holds can
 * never spend more than the lease and every readout agrees. The response reports the balance after
 * its true charge (`Hold.balanceMicro` less the charge), and the charge itself goes to this pod's
 * journal under the hold's lease (`journal.ts`), so a release lost with Redis loses no charge. A
 * request that fails releases the whole hold. If this pod dies before its queue left, the holds
 * expire and any pod's reconciler releases them as charging nothing (their charges died with the
 * pod's journal: forgiven).
 */
import type { TakeRider } from '../limiter/types.ts';
import type { Payer, Settlement } from './types.ts';
import type { ChargeRecord, HoldRequest, HoldResult, Release, Wallet } from './wallet.ts';

/** A hold this request made. */
export interface Hold {
  readonly accountId: string;
  readonly key: string;
  /** The lease the hold was taken from: its charge is spent under it. */
  readonly leaseId: string;
  readonly heldMicro: number;
  /** The balance with the hold still in it: the balance before this request's charge. */
  readonly balanceMicro: number;
}

/** How a request asks for its hold: the rider for its counter call, then what the reply means. */
export interface HoldPlan {
  /** Undefined for a wallet in this process (`made` holds in place). */
  readonly rider: TakeRider | undefined;
  /** The hold, from the counter call's reply (undefined: no hold was made; charge the usual way). */
  made(reply: unknown): Promise<Hold | undefined>;
}

export interface HoldsOptions {
  readonly wallet: Wallet;
  /** The balance's buckets when the wallet has not cached them yet (PostgreSQL). */
  readonly refreshBuckets: (accountId: string) => Promise<number>;
  /** The balance read whole (`Balances.balance`), when the wallet lost part of its lease with Redis. */
  readonly balance: (accountId: string) => Promise<number>;
  /** After each hold attempt: whether it held, the spendable credit left, the amount asked (the wallet's refill). */
  readonly afterHold: (accountId: string, held: boolean, unspentMicro: number, holdMicro: number) => void;
  /** How long a hold lives without its release. */
  readonly ttlMs: number;
  readonly now: () => number;
}

/** A queued release. */
interface Queued {
  readonly release: Release;
  readonly hold: Hold;
}

/** The releases one call carries: `done` with the call, or `failed` to queue them again. */
interface TakenQueue {
  readonly releases: readonly Release[];
  done(call: Promise<void>): void;
  /** The call carrying them has answered. */
  sent(): void;
  failed(): void;
}

const NOTHING_QUEUED: TakenQueue = { releases: [], done: () => undefined, sent: () => undefined, failed: () => undefined };

export class Holds {
  readonly #o: HoldsOptions;
  /** Charge key → release not sent yet. */
  readonly #queue = new Map<string, Queued>();
  /** Charge key → the call carrying its release. */
  readonly #sending = new Map<string, Promise<unknown>>();
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
    const batch = this.#takeQueue();
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
    if (result.ok || result.leased) this.#o.afterHold(accountId, result.ok, result.ok ? result.unspentMicro : 0, request.amountMicro);
    if (!result.ok) return undefined;
    const balance = this.#balanceWithHold(accountId, result);
    return { accountId, key: request.key, leaseId: result.leaseId, heldMicro: request.amountMicro, balanceMicro: typeof balance === 'number' ? balance : await balance };
  }

  /**
   * The balance with the hold in it: from the hold's own step, unless the wallet lost part of its
   * lease (then read whole). A number when the step had it all: no promise on every held request.
   */
  #balanceWithHold(accountId: string, held: Extract<HoldResult, { ok: true }>): number | Promise<number> {
    if (!held.whole) return this.#o.balance(accountId);
    const rest = held.unspentMicro + held.heldMicro;
    if (held.bucketsMicro !== undefined) return held.bucketsMicro + rest;
    return this.#o.refreshBuckets(accountId).then((buckets) => buckets + rest);
  }

  /**
   * The true charge is known: queues the release and answers what the response reports (the caller
   * puts the charge in the journal). Undefined
   * when the charge is above the hold (never, by construction): the hold is released whole and the
   * caller charges the usual way.
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

  /** Sends every queued release in one call (the flush loop, a settlement, a drain). */
  async send(): Promise<void> {
    const batch = this.#takeQueue();
    if (!batch.releases.length) return;
    const sending = this.#o.wallet.release(batch.releases);
    batch.done(sending);
    await sending.catch(() => undefined);
  }

  /** Sends the queued releases and waits for those already on their way: a readout after it counts every release this pod made. */
  async flushed(): Promise<void> {
    await this.send();
    await Promise.all(this.#sending.values());
  }

  /** Keys whose release has not left this pod (a pod that dies now leaves them to the reconciler). */
  unsent(): string[] {
    return [...this.#queue.keys(), ...this.#sending.keys()];
  }

  /** Releases, charging nothing, the holds whose pod died (the reconciler): their charges died with that pod's journal. */
  async reap(): Promise<string[]> {
    return this.#o.wallet.reapHolds(this.#o.now());
  }

  /** Queues the hold's release; a wallet in this process releases in place (the promise), with no round trip to save. */
  #enqueue(hold: Hold, record: ChargeRecord): Promise<void> | undefined {
    this.#settled.add(hold);
    const release = { accountId: hold.accountId, record };
    if (this.#o.wallet.local) return this.#o.wallet.release([release]);
    this.#queue.set(hold.key, { release, hold });
    return undefined;
  }

  /** Takes the queue for one call: `done` with the call, or `failed` to queue it again. */
  #takeQueue(): TakenQueue {
    // Nothing queued (a quiet pod, or the request right after a flush): nothing to track.
    if (this.#queue.size === 0) return NOTHING_QUEUED;
    const taken = [...this.#queue.values()];
    this.#queue.clear();
    let settle: (value?: unknown) => void = () => undefined;
    const carried = new Promise((resolve) => (settle = resolve));
    for (const item of taken) this.#sending.set(item.hold.key, carried);
    const finish = () => {
      for (const item of taken) this.#sending.delete(item.hold.key);
      settle();
    };
    return {
      releases: taken.map((item) => item.release),
      done: (call) => {
        call.then(
          () => finish(),
          () => {
            for (const item of taken) if (!this.#queue.has(item.hold.key)) this.#queue.set(item.hold.key, item);
            finish();
          },
        );
      },
      sent: finish,
      failed: () => {
        for (const item of taken) if (!this.#queue.has(item.hold.key)) this.#queue.set(item.hold.key, item);
        finish();
      },
    };
  }
}
