/**
 * Warms the pod's object cache when a new export version is published, so that the first download
 * of a file on this pod is served from local disk like every later one, instead of streaming from
 * S3 while it fills the cache (which ran at a third of a direct S3 GET).
 *
 * The warmer reads the current manifest every `pollMs` (the `Manifests` reader the routes use, so a
 * poll costs at most one small GET) and, on a version it has not warmed yet, copies that version's
 * files into the cache, most downloaded first (`download-counts.ts`), as many as fit in the cache's
 * bound. It never evicts a file it is warming for: each copy may evict older entries (previous
 * versions, stale results) but names the files of the plan as ones to keep, and the files of the
 * plan add up to at most the bound. At most `concurrency` copies run at once, so request traffic
 * keeps the rest of the pod, and they run in a worker thread (`object-copier.ts`), so the garbage
 * collections that reading S3 sets off do not pause request handling; `stop()` cancels the copies
 * in flight (their temporary files go) and waits for them.
 *
 * A download that arrives while its file is being warmed finds it neither cached nor fillable (one
 * copy per object) and streams from S3, as it would without the warm-up.
 */
import type { Manifest } from '@uda/shared/manifest';
import type { ObjectInfo, ObjectStore } from '@uda/shared/object-store';
import type { CopyObject } from './copy-object.ts';
import type { DownloadCounts } from './download-counts.ts';
import type { ObjectCache } from './object-cache.ts';

export interface CacheWarmerOptions {
  readonly cache: ObjectCache;
  readonly store: ObjectStore;
  /** The current export manifest (`Manifests.current`); undefined before the first export. */
  readonly manifests: { current(): Promise<Manifest | undefined> };
  readonly downloads: DownloadCounts;
  /** Runs the copies off the main thread (`object-copier.ts`); closed after each round and by `stop()`. Unset: copies run in this thread. */
  readonly copier?: { readonly copy: CopyObject; close(): Promise<void> };
  /** Copies at once, 1 or 2; 0 turns warming off. */
  readonly concurrency: number;
  readonly pollMs: number;
  readonly metrics?: CacheWarmerMetrics;
  /** Store or disk trouble is reported here; the file stays in the store and is cached on first download. */
  readonly onError?: (error: unknown, what: string) => void;
}

/** What the warmer reports; `Metrics` implements it. */
export interface CacheWarmerMetrics {
  cacheWarmed(bytes: number): void;
}

/** What a warm round did: the files it copied in, by manifest file name, in the order they committed. */
export interface WarmRound {
  readonly version: string;
  readonly warmed: readonly string[];
}

export class CacheWarmer {
  readonly #options: CacheWarmerOptions;
  readonly #abort = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  #polling: Promise<unknown> = Promise.resolve();
  /** Rounds in flight, so that `stop()` waits for their copies to clean up. */
  readonly #rounds = new Set<Promise<WarmRound>>();
  #warmedVersion: string | undefined;
  #lastRound: WarmRound | undefined;
  readonly #onError: (error: unknown, what: string) => void;

  constructor(options: CacheWarmerOptions) {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 0 || options.concurrency > 2) {
      throw new Error(`warm-up concurrency must be 0, 1 or 2, not ${options.concurrency}`);
    }
    this.#options = options;
    this.#onError = options.onError ?? (() => undefined);
  }

  /** Whether the warmer has anything to do: a cache to fill and copies allowed. */
  get enabled(): boolean {
    return this.#options.cache.maxBytes > 0 && this.#options.concurrency > 0;
  }

  /** The last round that ran to its end (not cancelled); undefined before the first. */
  get lastRound(): WarmRound | undefined {
    return this.#lastRound;
  }

  /** Polls now and then every `pollMs` until `stop()`; a no-op when not enabled. */
  start(): void {
    if (!this.enabled || this.#timer || this.#abort.signal.aborted) return;
    const tick = () => {
      this.#polling = this.poll().finally(() => {
        if (!this.#abort.signal.aborted) this.#timer = setTimeout(tick, this.#options.pollMs).unref();
      });
    };
    this.#timer = setTimeout(tick, 0).unref();
  }

  /**
   * Warms the current version if it is new to this warmer; resolves when its round is done. A
   * manifest that cannot be read is tried again on the next poll.
   */
  async poll(): Promise<WarmRound | undefined> {
    const manifest = await this.#options.manifests.current().catch((error: unknown) => {
      this.#onError(error, 'export manifest unreadable; the cache is warmed on a later poll');
      return undefined;
    });
    if (!manifest || manifest.version === this.#warmedVersion || this.#abort.signal.aborted) return undefined;
    this.#warmedVersion = manifest.version;
    return this.warm(manifest);
  }

  /** Copies this manifest's files into the cache, most downloaded first, within the cache's bound. */
  async warm(manifest: Manifest): Promise<WarmRound> {
    const round = this.#copyAll(manifest);
    this.#rounds.add(round);
    try {
      return await round;
    } finally {
      this.#rounds.delete(round);
    }
  }

  async #copyAll(manifest: Manifest): Promise<WarmRound> {
    const warmed: string[] = [];
    if (!this.enabled) return { version: manifest.version, warmed };
    const plan = await this.#plan(manifest);
    const keep = plan.map((file) => file.info);
    let next = 0;
    const worker = async () => {
      for (let file = plan[next++]; file && !this.#abort.signal.aborted; file = plan[next++]) {
        const copy = this.#options.copier?.copy;
        if (await this.#options.cache.copyIn(this.#options.store, file.info, { signal: this.#abort.signal, keep, ...(copy ? { copy } : {}) })) {
          warmed.push(file.name);
          this.#options.metrics?.cacheWarmed(file.info.size);
        }
      }
    };
    await Promise.all(Array.from({ length: this.#options.concurrency }, worker));
    // Publishes are hours apart: the worker's memory (its own heap and S3 client) is not kept meanwhile.
    await this.#options.copier?.close();
    const round = { version: manifest.version, warmed };
    if (!this.#abort.signal.aborted) this.#lastRound = round;
    return round;
  }

  /** Stops polling, cancels the copies in flight and waits until their temporary files are gone. */
  async stop(): Promise<void> {
    this.#abort.abort();
    clearTimeout(this.#timer);
    await Promise.allSettled([this.#polling, ...this.#rounds]);
    await this.#options.copier?.close();
  }

  /** The files to warm, in order, with their current store metadata; skipped: gone ones and those over the bound. */
  async #plan(manifest: Manifest): Promise<{ name: string; info: ObjectInfo }[]> {
    const ranked = rankByDownloads(manifest.files, this.#options.downloads);
    const found: { name: string; info: ObjectInfo }[] = [];
    for (const file of ranked) {
      if (this.#abort.signal.aborted) break;
      const info = await this.#options.store.head(file.key).catch((error: unknown) => this.#onError(error, `HEAD ${file.key} failed; not warmed`));
      if (info) found.push({ name: file.name, info });
    }
    return withinBound(found, this.#options.cache.maxBytes);
  }
}

/** Most downloaded first; files downloaded equally often keep their manifest order (a stable sort). */
export function rankByDownloads<T extends { readonly name: string }>(files: readonly T[], downloads: DownloadCounts): T[] {
  return [...files].sort((a, b) => downloads.of(b.name) - downloads.of(a.name));
}

/** In rank order, the files that fit `maxBytes` together: one too large for what is left is skipped, smaller ones after it still go. */
export function withinBound<T extends { readonly info: { readonly size: number } }>(files: readonly T[], maxBytes: number): T[] {
  let left = maxBytes;
  return files.filter((file) => {
    if (file.info.size > left) return false;
    left -= file.info.size;
    return true;
  });
}
