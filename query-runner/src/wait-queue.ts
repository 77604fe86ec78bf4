/**
 * The one queue of callers waiting for a unit of capacity (a limiter slot, a query worker, a
 * ranking thread). A wait is bounded (STYLE §9): it ends when the queue hands the waiter a value,
 * when its deadline passes, or when its caller's signal aborts (the caller stopped waiting),
 * whichever comes first, and a waiter that ended so leaves the queue at once. Who is served next is
 * the caller's choice (`serve`'s pick: the fair turn of `fair-turns.ts`, or the oldest waiter), and
 * so is what it is handed: the queue keeps only the waiters and their bounds.
 */

export interface WaitBounds {
  /** Milliseconds the waiter may wait from now; none: until served or stopped. */
  readonly timeoutMs?: number;
  /** Aborted when the caller stopped waiting. */
  readonly signal?: AbortSignal;
}

export interface WaitQueueOptions<W> {
  /** The error of a wait whose deadline passed. */
  readonly timedOut: (waiter: W) => unknown;
  /** The error of a wait whose caller stopped waiting. */
  readonly stopped: (signal: AbortSignal) => unknown;
  /** Called when a waiter left the queue without being served (deadline or signal). */
  readonly onLeave?: () => void;
}

export interface WaitQueue<W, V> {
  /** The waiters, oldest first (what a pick chooses among). */
  readonly waiting: readonly W[];
  /** Waits for `serve` to hand `waiter` a value; rejects at the deadline or when the signal aborts. */
  wait(waiter: W, bounds?: WaitBounds): Promise<V>;
  /**
   * Hands `hand(waiter)` to the waiter at `pick(waiting)` (the oldest without a pick) and returns
   * it; undefined, handing nothing, when none waits or the pick is -1.
   */
  serve(hand: (waiter: W) => V, pick?: (waiting: readonly W[]) => number): W | undefined;
  /** Refuses every waiter with `error`. */
  refuseAll(error: unknown): void;
}

interface Entry<W, V> {
  readonly waiter: W;
  settle(outcome: { value: V } | { error: unknown }): void;
}

const oldest = (waiting: readonly unknown[]) => (waiting.length > 0 ? 0 : -1);

export function createWaitQueue<W, V>({ timedOut, stopped, onLeave = () => {} }: WaitQueueOptions<W>): WaitQueue<W, V> {
  const entries: Entry<W, V>[] = [];
  const waiters: W[] = [];
  const remove = (entry: Entry<W, V>) => {
    const index = entries.indexOf(entry);
    if (index < 0) return false;
    entries.splice(index, 1);
    waiters.splice(index, 1);
    return true;
  };

  const wait = (waiter: W, { timeoutMs, signal }: WaitBounds = {}) =>
    new Promise<V>((resolve, reject) => {
      if (signal?.aborted) return reject(stopped(signal));
      const leave = (error: unknown) => {
        if (!remove(entry)) return;
        entry.settle({ error });
        onLeave();
      };
      const timer = timeoutMs === undefined ? undefined : setTimeout(() => leave(timedOut(waiter)), Math.max(0, timeoutMs));
      const onAbort = () => leave(stopped(signal!));
      signal?.addEventListener('abort', onAbort, { once: true });
      const entry: Entry<W, V> = {
        waiter,
        settle(outcome) {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          if ('value' in outcome) resolve(outcome.value);
          else reject(outcome.error);
        },
      };
      entries.push(entry);
      waiters.push(waiter);
    });

  return {
    waiting: waiters,
    wait,
    serve(hand, pick = oldest) {
      const index = pick(waiters);
      const entry = entries[index];
      if (index < 0 || !entry) return undefined;
      remove(entry);
      try {
        entry.settle({ value: hand(entry.waiter) });
      } catch (error) {
        // A waiter taken from the queue is always settled: with the error of a hand that failed.
        entry.settle({ error });
        throw error;
      }
      return entry.waiter;
    },
    refuseAll(error) {
      waiters.splice(0);
      for (const entry of entries.splice(0)) entry.settle({ error });
    },
  };
}
