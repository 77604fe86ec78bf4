/**
 * This pod's hold releases on their way to the wallet (`holds.ts`). A release never costs a round
 * trip of its own: it waits here until the next counter call this pod makes (any account's) takes
 * the queue as its rider, or the flush (every 250 ms) sends it. A call that fails puts its releases
 * back; a release is safe to send twice. A charged lookup takes the queue on every request, so
 * taking it allocates one object and two arrays, and no promise unless a readout waits for it.
 */
import type { Hold } from '../types.ts';
import type { ChargeRecord, Release, Wallet } from '../wallet.ts';

/** A queued release. */
interface Queued {
  readonly release: Release;
  readonly hold: Hold;
}

/** The releases one call carries: `done` with the call, `sent` once it answered, or `failed` to queue them again. */
export interface TakenQueue {
  readonly releases: readonly Release[];
  done(call: Promise<void>): void;
  sent(): void;
  failed(): void;
}

const NOTHING_QUEUED: TakenQueue = { releases: [], done: () => undefined, sent: () => undefined, failed: () => undefined };

/** Releases taken by one call, until it ends; `ended` is made only when a readout waits for it. */
class Carried implements TakenQueue {
  readonly items: readonly Queued[];
  readonly releases: Release[];
  readonly #owner: ReleaseQueue;
  #ended: { promise: Promise<void>; resolve: () => void } | undefined;
  #open = true;

  constructor(items: readonly Queued[], owner: ReleaseQueue) {
    this.items = items;
    this.releases = items.map((item) => item.release);
    this.#owner = owner;
  }

  done(call: Promise<void>): void {
    call.then(
      () => this.sent(),
      () => this.failed(),
    );
  }

  sent(): void {
    this.#end();
  }

  failed(): void {
    this.#owner.requeue(this.items);
    this.#end();
  }

  /** Resolves once the call carrying these releases has ended. */
  ended(): Promise<void> {
    if (!this.#open) return Promise.resolve();
    if (!this.#ended) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.#ended = { promise, resolve };
    }
    return this.#ended.promise;
  }

  #end(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#owner.forget(this);
    this.#ended?.resolve();
  }
}

export class ReleaseQueue {
  readonly #wallet: Wallet;
  /** Charge key → release not sent yet. */
  readonly #queue = new Map<string, Queued>();
  /** The calls carrying releases now. */
  readonly #carried = new Set<Carried>();

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
    if (this.#carried.size) await Promise.all([...this.#carried].map((batch) => batch.ended()));
  }

  /** Keys whose release has not left this pod (a pod that dies now leaves them to the reconciler). */
  unsent(): string[] {
    return [...this.#queue.keys(), ...[...this.#carried].flatMap((batch) => batch.items.map((item) => item.hold.key))];
  }

  /** Takes the queue for one call: `done` with the call, or `failed` to queue it again. */
  take(): TakenQueue {
    // Nothing queued (a quiet pod, or the request right after a flush): nothing to track.
    if (this.#queue.size === 0) return NOTHING_QUEUED;
    const batch = new Carried([...this.#queue.values()], this);
    this.#queue.clear();
    this.#carried.add(batch);
    return batch;
  }

  /** A call carrying releases ended. */
  forget(batch: Carried): void {
    this.#carried.delete(batch);
  }

  /** Puts back the releases of a call that failed, unless a newer release of the same hold is queued. */
  requeue(items: readonly Queued[]): void {
    for (const item of items) if (!this.#queue.has(item.hold.key)) this.#queue.set(item.hold.key, item);
  }
}
