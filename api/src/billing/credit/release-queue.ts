/**
 * This pod's hold releases on their way to the wallet (`holds.ts`). A release never costs a round
 * trip of its own: it waits here until the next counter call this pod makes (any account's) takes
 * the queue as its rider, or the flush (every 250 ms) sends it. A call that fails puts its releases
 * back; a release is safe to send twice.
 */
import type { Hold } from '../types.ts';
import type { ChargeRecord, Release, Wallet } from '../wallet.ts';

/** A queued release. */
interface Queued {
  readonly release: Release;
  readonly hold: Hold;
}

/** The releases one call carries: `done` with the call, or `failed` to queue them again. */
export interface TakenQueue {
  readonly releases: readonly Release[];
  done(call: Promise<void>): void;
  /** The call carrying them has answered. */
  sent(): void;
  failed(): void;
}

const NOTHING_QUEUED: TakenQueue = { releases: [], done: () => undefined, sent: () => undefined, failed: () => undefined };

export class ReleaseQueue {
  readonly #wallet: Wallet;
  /** Charge key → release not sent yet. */
  readonly #queue = new Map<string, Queued>();
  /** Charge key → the call carrying its release. */
  readonly #sending = new Map<string, Promise<unknown>>();

  constructor(wallet: Wallet) {
    this.#wallet = wallet;
  }

  /** Queues the hold's release: its true charge, or nothing (`record.amountMicro` 0). */
  add(hold: Hold, record: ChargeRecord): void {
    this.#queue.set(hold.key, { release: { accountId: hold.accountId, record }, hold });
  }

  /** Sends every queued release in one call (the flush loop, a settlement, a drain). */
  async send(): Promise<void> {
    const batch = this.take();
    if (!batch.releases.length) return;
    const sending = this.#wallet.release(batch.releases);
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

  /** Takes the queue for one call: `done` with the call, or `failed` to queue it again. */
  take(): TakenQueue {
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
    const requeue = () => {
      for (const item of taken) if (!this.#queue.has(item.hold.key)) this.#queue.set(item.hold.key, item);
      finish();
    };
    return {
      releases: taken.map((item) => item.release),
      done: (call) => void call.then(finish, requeue),
      sent: finish,
      failed: requeue,
    };
  }
}
