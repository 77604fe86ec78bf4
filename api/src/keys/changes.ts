/**
 * Key and tier change announcements: every pod caches verified keys, so a revoke,
 * replace or tier change must reach every pod's cache. One interface, two adapters: Redis pub/sub
 * between pods (`changes-redis.ts`), or in-process for the embedded default (one process, nothing
 * to tell).
 */

/** `accountId`: that account's keys or tier changed; undefined: anything may have (a lost link). */
export type ChangeListener = (accountId: string | undefined) => void;

export interface KeyChanges {
  /** Tells this process at once, then every other pod. */
  announce(accountId: string): Promise<void>;
  listen(listener: ChangeListener): void;
  /** False while another pod's announcement could be missed: caches then shorten their trust. */
  readonly connected: boolean;
  close(): Promise<void>;
}

export class LocalKeyChanges implements KeyChanges {
  readonly connected = true;
  readonly #listeners: ChangeListener[] = [];

  async announce(accountId: string): Promise<void> {
    this.emit(accountId);
  }

  /** Tells this process's listeners only (what an adapter received from another pod). */
  emit(accountId: string | undefined): void {
    for (const listener of this.#listeners) listener(accountId);
  }

  listen(listener: ChangeListener): void {
    this.#listeners.push(listener);
  }

  async close(): Promise<void> {}
}
