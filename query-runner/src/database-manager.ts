/**
 * Hot swap: the runner follows `exports/manifest.json`, opens each new verified database
 * in its own sandbox, and swaps it in. Queries hold a lease on the version they started with, so a
 * swap never fails them; the old version is closed and its file deleted once its last lease ends.
 */
import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { DuckDBInstance } from '@duckdb/node-api';
import type { Logger } from '@uda/shared/logger';
import type { ObjectStore } from '@uda/shared/object-store';
import { databaseEntry, downloadDatabase, readManifest } from './database-download.ts';
import { openSandbox } from './sandbox.ts';
import type { SandboxLimits } from './sandbox.ts';

/** Something that lives as long as one database version, such as the lookups' pooled connections. */
export interface VersionResource {
  close(): void;
}

export interface OpenDatabase {
  readonly version: string;
  readonly path: string;
  readonly instance: DuckDBInstance;
  leases: number;
  retired: boolean;
  /** Closed, in order, before the instance when the version is disposed (see `versionResource`). */
  readonly resources: Map<string, VersionResource>;
}

export interface DatabaseLease {
  readonly database: OpenDatabase;
  release(): void;
}

export interface DatabaseManagerOptions {
  readonly store: ObjectStore;
  readonly dir: string;
  readonly limits: SandboxLimits;
  readonly pollMs: number;
  readonly logger: Logger;
  readonly onVersion?: (version: string) => void;
  /**
   * Builds a version's resources before it is swapped in (the lookups' in-memory search index), so
   * the lookups on a new version never wait for them; a version it fails for is not swapped in.
   */
  readonly prepare?: (database: OpenDatabase) => Promise<void>;
}

export class DatabaseManager {
  private current: OpenDatabase | undefined;
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  private readonly options: DatabaseManagerOptions;

  constructor(options: DatabaseManagerOptions) {
    this.options = options;
  }

  get ready(): boolean {
    return this.current !== undefined;
  }

  get version(): string | undefined {
    return this.current?.version;
  }

  /** Checks now, then on every poll interval; a failed check keeps the database in use. */
  start(): void {
    const tick = () => {
      void this.checkNow().finally(() => {
        if (this.timer !== undefined) this.timer = setTimeout(tick, this.options.pollMs);
      });
    };
    this.timer = setTimeout(tick, 0);
  }

  checkNow(): Promise<void> {
    this.checking ??= this.check()
      .catch((error: unknown) => this.options.logger.error({ err: error }, 'database check failed; keeping the current version'))
      .finally(() => (this.checking = undefined));
    return this.checking;
  }

  lease(): DatabaseLease | undefined {
    const database = this.current;
    if (!database) return undefined;
    database.leases += 1;
    let released = false;
    return {
      database,
      release: () => {
        if (released) return;
        released = true;
        database.leases -= 1;
        if (database.retired && database.leases === 0) void this.dispose(database);
      },
    };
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.checking;
    const last = this.current;
    this.current = undefined;
    if (last) this.retire(last);
  }

  private async check(): Promise<void> {
    const manifest = await readManifest(this.options.store);
    const entry = manifest && databaseEntry(manifest);
    if (!manifest || !entry || manifest.version === this.current?.version) return;
    const path = await downloadDatabase(this.options.store, entry, manifest, this.options.dir);
    const instance = await openSandbox(path, this.options.limits);
    const opened: OpenDatabase = { version: manifest.version, path, instance, leases: 0, retired: false, resources: new Map() };
    try {
      await this.options.prepare?.(opened);
    } catch (error) {
      await this.dispose(opened);
      throw error;
    }
    const previous = this.current;
    this.current = opened;
    this.options.logger.info({ version: manifest.version, previous: previous?.version }, 'database swapped in');
    this.options.onVersion?.(manifest.version);
    if (previous) this.retire(previous);
  }

  private retire(database: OpenDatabase): void {
    database.retired = true;
    if (database.leases === 0) void this.dispose(database);
  }

  private async dispose(database: OpenDatabase): Promise<void> {
    // No lease is left, so no resource is in use: its connections close before their instance.
    for (const resource of database.resources.values()) resource.close();
    database.resources.clear();
    database.instance.closeSync();
    await rm(dirname(database.path), { recursive: true, force: true });
    this.options.logger.info({ version: database.version }, 'old database closed and deleted');
  }
}

/**
 * The resource `key` of a database version, created on first use and closed with the version, so
 * state built for one version (prepared statements) is never used on another.
 */
export function versionResource<T extends VersionResource>(database: OpenDatabase, key: string, create: (instance: DuckDBInstance) => T): T {
  const existing = database.resources.get(key);
  if (existing) return existing as T;
  const created = create(database.instance);
  database.resources.set(key, created);
  return created;
}
