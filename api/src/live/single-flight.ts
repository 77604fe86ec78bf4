/**
 * Identical concurrent lookups share one upstream call. In-process only: pods do not coalesce with
 * each other, but the shared etiquette still bounds what they send together.
 */
export class SingleFlight<T> {
  readonly #inFlight = new Map<string, Promise<T>>();

  run(key: string, work: () => Promise<T>): Promise<T> {
    const running = this.#inFlight.get(key);
    if (running) return running;
    const started = work().finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, started);
    return started;
  }

  get size(): number {
    return this.#inFlight.size;
  }
}
