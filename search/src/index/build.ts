/**
 * Builds stored sources' index arrays and page files: the exporter from the postings' arrays its
 * index build returns (`buildExportedSourceFiles`, once per version, for `search-index.bin`), a
 * runner given an older export without that file from the database's `_search_*` tables
 * (`buildSourceFiles`, when it opens the version).
 */
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { STORED_SOURCES } from '@uda/shared/runner-contract';
import type { SourceFiles, WrittenSourceFiles } from './index-file.ts';
import type { BuiltIndex } from './posting-merge.ts';
import type { StoredLookupSource } from './page-sql.ts';
import { pagesFileName, renderPages } from './pages.ts';
import { completeIndexArrays, loadSourceIndex } from './source-index.ts';

/** The sources with an index (a source whose tables were not built has none), their page files written into `dir`. */
export async function buildSourceFiles(connection: DuckDBConnection, dir: string): Promise<Map<StoredLookupSource, SourceFiles>> {
  const sources = new Map<StoredLookupSource, SourceFiles>();
  for (const source of STORED_SOURCES) {
    const files = await buildOneSourceFiles(connection, source, dir);
    if (files) sources.set(source, files);
  }
  return sources;
}

/** One source's index arrays and page file (written into `dir`); undefined when the source has no index. */
export async function buildOneSourceFiles(connection: DuckDBConnection, source: StoredLookupSource, dir: string): Promise<SourceFiles | undefined> {
  const index = await loadSourceIndex(connection, source);
  if (!index) return undefined;
  return { index, pages: await renderPages(connection, source, index.documents, join(dir, pagesFileName(source))) };
}

/** One source's arrays and page file (written into `dir`) from what its index build returned: the index tables are not read. */
export async function buildExportedSourceFiles(
  connection: DuckDBConnection, source: StoredLookupSource, dir: string, built: BuiltIndex,
): Promise<WrittenSourceFiles> {
  const index = completeIndexArrays(built);
  return { index, pages: await renderPages(connection, source, index.documents, join(dir, pagesFileName(source))) };
}
