/**
 * The stored sources' search index in memory (`@uda/search/index`: the arrays and their
 * layout), one per database version, with the version's page store (`page-store.ts`), loaded when
 * the version is opened, before it is swapped in. Ranking a lookup in DuckDB cost ~22 ms of CPU at
 * scale 1 (hash aggregates, a window and joins over the query terms' postings on every request);
 * over these arrays it reads only those postings (`rank.ts`).
 *
 * The exporter builds the arrays and the page files once per version (`search-index.bin`,
 * `pages-{source}.jsonl`), and the runner downloads them with the database: loading them is a few
 * large reads. An older export without them still works: the runner builds the same arrays and
 * pages from the database's `_search_*` tables, through the same shared code, which took ~26 s at
 * scale 1.
 */
import { access, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { DuckDBInstance } from '@duckdb/node-api';
import { buildSourceFiles, indexBytes, INDEX_FILE_NAME, readIndexFile, type SourceFiles, type SourceIndex, type StoredLookupSource } from '@uda/search/index';
import type { OpenDatabase, VersionResource } from '../database-manager.ts';
import { openSandbox, type SandboxLimits } from '../sandbox.ts';
import { closePageStore, openPageStore, type PageStore } from './page-store.ts';

/** Where a version's index came from: the exporter's file, or built from the database (an older export). */
export type IndexOrigin = 'file' | 'database';

const RESOURCE = 'search-index';

export class SearchIndexes implements VersionResource {
  private readonly sources: Map<StoredLookupSource, SourceIndex>;
  private readonly pageStores: Map<StoredLookupSource, PageStore>;
  private readonly closeListeners: (() => void)[] = [];
  readonly origin: IndexOrigin;

  constructor(sources: Map<StoredLookupSource, SourceIndex>, pageStores: Map<StoredLookupSource, PageStore>, origin: IndexOrigin) {
    this.sources = sources;
    this.pageStores = pageStores;
    this.origin = origin;
  }

  /** Undefined when the export has no index for the source (its tables were not built). */
  get(source: StoredLookupSource): SourceIndex | undefined {
    return this.sources.get(source);
  }

  pages(source: StoredLookupSource): PageStore | undefined {
    return this.pageStores.get(source);
  }

  /** Per source: postings, titles and megabytes held, for the log and the benchmark. */
  describe(): Record<string, { postings: number; titles: number; megabytes: number }> {
    return Object.fromEntries(
      [...this.sources].map(([source, index]) => [source, { postings: index.postingDocs.length, titles: index.titleDocs.length, megabytes: Math.round(indexBytes(index) / 1e6) }]),
    );
  }

  get isClosed(): boolean {
    return this.sources.size === 0;
  }

  /** Calls `listener` when the version is closed: the ranking threads drop their references to its arrays then. */
  onClose(listener: () => void): void {
    if (this.isClosed) listener();
    else this.closeListeners.push(listener);
  }

  /** Drops the arrays, so they are freed once the version's last lookup has returned, and closes the page files. */
  close(): void {
    this.sources.clear();
    for (const listener of this.closeListeners.splice(0)) listener();
    for (const store of this.pageStores.values()) void closePageStore(store);
    this.pageStores.clear();
  }
}

/** The version's resource over `sources`, with their page files in `dir` opened. */
async function keepIndexes(database: OpenDatabase, sources: Map<StoredLookupSource, SourceFiles>, dir: string, origin: IndexOrigin): Promise<SearchIndexes> {
  const pageStores = new Map<StoredLookupSource, PageStore>();
  try {
    for (const [source, { pages }] of sources) pageStores.set(source, await openPageStore(dir, source, pages));
  } catch (error) {
    await Promise.all([...pageStores.values()].map(closePageStore));
    throw error;
  }
  const indexes = new SearchIndexes(new Map([...sources].map(([source, { index }]) => [source, index])), pageStores, origin);
  database.resources.set(RESOURCE, indexes);
  return indexes;
}

/**
 * Builds every stored source's index of `database` and renders its page files into `pagesDir`,
 * for an export without the exporter's files. The tables are read through `reader`, a second
 * instance of the same file that the caller closes afterwards: reading every posting fills an
 * instance's buffer pool with blocks no lookup reads again (~700 MB at scale 1), which the
 * version's own instance would keep resident.
 */
export async function loadSearchIndexes(database: OpenDatabase, reader: DuckDBInstance, pagesDir: string): Promise<SearchIndexes> {
  const connection = await reader.connect();
  try {
    return await keepIndexes(database, await buildSourceFiles(connection, pagesDir), pagesDir, 'database');
  } finally {
    connection.closeSync();
  }
}

/**
 * The exporter's `search-index.bin` and page files in `dir`; undefined when there is no such file or
 * it has another format version. Once read, the index file is deleted: its arrays are in memory,
 * and the disk it held (~490 MB at scale 1) is the version's until the next swap.
 */
async function loadIndexFile(database: OpenDatabase, dir: string): Promise<SearchIndexes | undefined> {
  const path = join(dir, INDEX_FILE_NAME);
  if (!(await access(path).then(() => true, () => false))) return undefined;
  const sources = await readIndexFile(path);
  if (!sources) return undefined;
  await rm(path);
  return keepIndexes(database, sources, dir, 'file');
}

/**
 * The version's index: from the files downloaded beside the database when the export has them,
 * else built from the database through a sandboxed reader instance of its file, closed afterwards.
 */
export async function openSearchIndexes(database: OpenDatabase, limits: SandboxLimits): Promise<SearchIndexes> {
  const dir = dirname(database.path);
  const fromFile = await loadIndexFile(database, dir);
  if (fromFile) return fromFile;
  const reader = await openSandbox(database.path, limits);
  try {
    return await loadSearchIndexes(database, reader, dir);
  } finally {
    reader.closeSync();
  }
}

/** The index loaded when `database` was opened (`loadSearchIndexes`). */
export function searchIndexesOf(database: OpenDatabase): SearchIndexes | undefined {
  return database.resources.get(RESOURCE) as SearchIndexes | undefined;
}
