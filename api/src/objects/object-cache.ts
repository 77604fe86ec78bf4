/**
 * A bounded disk cache, per pod, of the immutable objects the API serves (export files and stored
 * results). An S3 GET through the API costs the pod's CPU twice (the S3 socket in, the
 * client's out) and the S3 server's CPU besides; a local file costs one read and one write, so a
 * repeated download or range read runs at the speed of the client's socket.
 *
 * Entries are named by a hash of key, ETag and size, so a key whose object is replaced (a stored
 * result re-run after its window) never serves the old bytes. A whole-object GET from the store
 * is copied into a temporary file as it streams (a range read of an uncached object starts a whole
 * copy in the background); the file is renamed into place only when every
 * byte arrived and its size matches, so a cut download never leaves a cached file. The bytes held
 * (committed entries plus the fills in flight) never exceed `maxBytes`: room is made by evicting
 * the least recently used entries before a fill starts, and a fill that cannot get room does not
 * start. A file evicted while it is being served stays readable through its open descriptor.
 *
 * Besides downloads, the warm-up (`cache-warmer.ts`) fills the cache with each new export version
 * through `copyIn`, under the same bound and the same one-fill-per-object rule.
 *
 * The cache is only ever a shortcut: when its folder cannot be used, every read goes to the store.
 */
import { createHash, randomUUID } from 'node:crypto';
import { type FileHandle, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ObjectInfo, ObjectStore } from '@uda/shared/object-store';
import { PooledFileWriter } from './pooled-file-writer.ts';
import { copyObject, type CopyObject } from './copy-object.ts';

export interface ObjectCacheOptions {
  readonly dir: string;
  /** 0 disables the cache. */
  readonly maxBytes: number;
  readonly metrics?: ObjectCacheMetrics;
  /** Disk trouble is reported here and otherwise ignored: the store still answers. */
  readonly onError?: (error: unknown, what: string) => void;
}

/** What the cache reports; `Metrics` implements it. */
export interface ObjectCacheMetrics {
  cacheLookup(outcome: 'hit' | 'miss'): void;
  cacheEvicted(): void;
}

interface Entry {
  readonly path: string;
  readonly size: number;
}

/** Committed entries are 64 hex characters; fills in progress start with this prefix. */
const TEMP_PREFIX = '.fill-';
const ENTRY_NAME = /^[0-9a-f]{64}$/;

export class ObjectCache {
  readonly dir: string;
  readonly maxBytes: number;
  /** Least recently used first: a Map keeps insertion order, and a hit re-inserts its entry. */
  readonly #entries = new Map<string, Entry>();
  /** One fill per entry: concurrent first GETs of an object write one file, not several. */
  readonly #filling = new Set<string>();
  #heldBytes = 0;
  readonly #metrics: ObjectCacheMetrics | undefined;
  readonly #onError: (error: unknown, what: string) => void;

  private constructor(options: ObjectCacheOptions) {
    this.dir = options.dir;
    this.maxBytes = options.maxBytes;
    this.#metrics = options.metrics;
    this.#onError = options.onError ?? (() => undefined);
  }

  /**
   * Opens the cache folder, keeping the entries a previous process committed and removing its
   * unfinished fills. A folder that cannot be created or read gives a disabled cache.
   */
  static async open(options: ObjectCacheOptions): Promise<ObjectCache> {
    const cache = new ObjectCache(options);
    if (options.maxBytes <= 0) return cache;
    try {
      await mkdir(options.dir, { recursive: true });
      await cache.#adoptExisting();
    } catch (error) {
      cache.#onError(error, `object cache folder ${options.dir} unusable; serving from the object store`);
      return new ObjectCache({ ...options, maxBytes: 0 });
    }
    return cache;
  }

  /** Bytes the cache holds on disk now, fills in flight included. */
  get heldBytes(): number {
    return this.#heldBytes;
  }

  /** The cached file of this object version, opened; undefined on a miss. */
  async openHit(info: ObjectInfo): Promise<FileHandle | undefined> {
    if (this.maxBytes <= 0) return undefined;
    const name = entryName(info);
    const entry = this.#entries.get(name);
    if (entry?.size === info.size) {
      try {
        const file = await open(entry.path, 'r');
        this.#entries.delete(name);
        this.#entries.set(name, entry);
        this.#metrics?.cacheLookup('hit');
        return file;
      } catch (error) {
        // Removed behind our back (someone cleaned the folder): forget it and read the store.
        this.#onError(error, `cached object ${info.key} unreadable`);
        this.#drop(name);
      }
    }
    this.#metrics?.cacheLookup('miss');
    return undefined;
  }

  /**
   * A fill for a whole-object read of this version, or undefined when it should not be cached
   * now: the cache is off, the object is cached or being cached already, or no room can be made.
   */
  startFill(info: ObjectInfo): CacheFill | undefined {
    const reservation = this.#reserve(info, []);
    if (!reservation) return undefined;
    return new CacheFill(new PooledFileWriter(reservation.path), {
      ...reservation,
      onError: (error) => this.#onError(error, `caching ${info.key} failed; it stays in the object store`),
    });
  }

  /**
   * Copies a whole object into the cache with no client attached; true when this call committed
   * it. False when there was nothing to do (cached, being cached, no room), the copy failed
   * (reported to `onError`; a changed object is a failure) or `signal` aborted it. Either way no
   * partial file stays behind. `copy` does the copying (the warm-up's runs in a worker thread);
   * by default `copyObject` in this thread. `keep` names objects whose cached files must not be
   * evicted to make room (the warm-up never evicts what it warms for).
   */
  async copyIn(store: ObjectStore, info: ObjectInfo, options: { signal?: AbortSignal; keep?: readonly ObjectInfo[]; copy?: CopyObject } = {}): Promise<boolean> {
    const { signal } = options;
    if (signal?.aborted) return false;
    const reservation = this.#reserve(info, options.keep ?? []);
    if (!reservation) return false;
    try {
      await (options.copy ?? ((object, path) => copyObject(store, object, path, signal)))(info, reservation.path, signal);
      await reservation.commit();
      return true;
    } catch (error) {
      if (!signal?.aborted) this.#onError(error, `caching ${info.key} failed; it stays in the object store`);
      await reservation.abort().catch((abortError: unknown) => this.#onError(abortError, `removing the partial copy of ${info.key} failed`));
      return false;
    }
  }

  /**
   * Room and a temporary path for one object's file; undefined when the cache is off, the object
   * is cached or being cached already, or no room can be made without evicting `keep`. `commit`
   * checks the file's size and renames it into place; `abort` removes it and frees its room.
   */
  #reserve(info: ObjectInfo, keep: readonly ObjectInfo[]): { path: string; commit(): Promise<void>; abort(): Promise<void> } | undefined {
    const name = entryName(info);
    if (this.maxBytes <= 0 || this.#entries.has(name) || this.#filling.has(name)) return undefined;
    if (!this.#makeRoom(info.size, new Set(keep.map(entryName)))) return undefined;
    this.#filling.add(name);
    this.#heldBytes += info.size;
    const temp = join(this.dir, `${TEMP_PREFIX}${randomUUID()}`);
    return {
      path: temp,
      commit: async () => {
        const { size } = await stat(temp);
        if (size !== info.size) throw new Error(`fill of ${info.key} wrote ${size} of ${info.size} bytes`);
        await rename(temp, join(this.dir, name));
        this.#filling.delete(name);
        this.#entries.set(name, { path: join(this.dir, name), size: info.size });
      },
      abort: async () => {
        this.#filling.delete(name);
        this.#heldBytes -= info.size;
        await rm(temp, { force: true });
      },
    };
  }

  /**
   * A range read of an object not cached yet asks for a whole copy: a Parquet reader's next
   * ranges (DuckDB reads the footer, then row groups) then come from disk. A failure costs only
   * the copy.
   */
  fillInBackground(store: ObjectStore, info: ObjectInfo): void {
    void this.copyIn(store, info);
  }

  /** Evicts least recently used entries, but not `keep`, until `size` more bytes fit; false when they cannot. */
  #makeRoom(size: number, keep: ReadonlySet<string> = new Set()): boolean {
    if (size > this.maxBytes) return false;
    for (const name of this.#entries.keys()) {
      if (this.#heldBytes + size <= this.maxBytes) break;
      if (keep.has(name)) continue;
      this.#drop(name);
      this.#metrics?.cacheEvicted();
    }
    return this.#heldBytes + size <= this.maxBytes;
  }

  #drop(name: string): void {
    const entry = this.#entries.get(name);
    if (!entry) return;
    this.#entries.delete(name);
    this.#heldBytes -= entry.size;
    rm(entry.path, { force: true }).catch((error: unknown) => this.#onError(error, `evicting ${entry.path} failed`));
  }

  /** Entries from a previous process, oldest modification first; over the bound, the oldest go. */
  async #adoptExisting(): Promise<void> {
    const found: (Entry & { name: string; mtimeMs: number })[] = [];
    for (const name of await readdir(this.dir)) {
      const path = join(this.dir, name);
      if (name.startsWith(TEMP_PREFIX)) await rm(path, { force: true });
      else if (ENTRY_NAME.test(name)) {
        const info = await stat(path);
        if (info.isFile()) found.push({ name, path, size: info.size, mtimeMs: info.mtimeMs });
      }
    }
    for (const entry of found.sort((a, b) => a.mtimeMs - b.mtimeMs)) {
      this.#entries.set(entry.name, { path: entry.path, size: entry.size });
      this.#heldBytes += entry.size;
    }
    this.#makeRoom(0);
  }
}

/**
 * One object being copied into the cache while it streams to a client. The caller pipes the
 * store's body into `stream`, then calls `finish` with whether the whole body arrived.
 */
export class CacheFill {
  readonly stream: PooledFileWriter;
  #failed = false;
  readonly #steps: { commit(): Promise<void>; abort(): Promise<void>; onError(error: unknown): void };

  constructor(stream: PooledFileWriter, steps: { commit(): Promise<void>; abort(): Promise<void>; onError(error: unknown): void }) {
    this.stream = stream;
    this.#steps = steps;
    // A disk error ends the copy, never the download: the pipe from the body drops this stream.
    stream.on('error', (error) => {
      this.#failed = true;
      steps.onError(error);
    });
  }

  /**
   * Commits the file when the body arrived whole and was written whole; removes it otherwise.
   * True when the file was committed.
   */
  async finish(whole: boolean): Promise<boolean> {
    if (whole && !this.#failed) {
      const written = await new Promise<boolean>((resolve) => {
        if (this.stream.closed) resolve(!this.stream.errored);
        else this.stream.once('close', () => resolve(!this.stream.errored));
      });
      if (written) {
        try {
          await this.#steps.commit();
          return true;
        } catch (error) {
          this.#steps.onError(error);
        }
      }
    }
    this.stream.destroy();
    await this.#steps.abort().catch((error: unknown) => this.#steps.onError(error));
    return false;
  }
}

/** The cache file name of an object version (exported for the benchmark, which waits for it). */
export function entryName(info: ObjectInfo): string {
  return createHash('sha256').update(`${info.key}\n${info.etag}\n${info.size}`).digest('hex');
}
