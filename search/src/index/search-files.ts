/**
 * The runners' search files of a version: the lookups' index arrays (`search-index.bin`) and one
 * page file per stored source (`pages-{source}.jsonl`), built from the `_search_*` tables of the
 * index build (its postings' arrays, which it returns, and the `titles` table), with the code a
 * runner would otherwise run when it opens the version (`build.ts`). Building them once at export
 * saves every runner start the work (~26 s at scale 1).
 *
 * A source's part is built as soon as its search tables are and appended to the index file at once,
 * so the writer holds one source's arrays at a time, never them all.
 */
import { mkdir } from 'node:fs/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import { join } from 'node:path';
import { STORED_SOURCES } from '@uda/shared/runner-contract';
import { buildExportedSourceFiles } from './build.ts';
import { INDEX_FILE_NAME, openIndexFile } from './index-file.ts';
import type { StoredLookupSource } from './page-sql.ts';
import { pagesFileName } from './pages.ts';
import type { BuiltIndex } from './posting-merge.ts';

export interface SearchFilesWriter {
  /** Builds the source's arrays from what its index build returned, and its page file (through `connection`), and appends them. */
  addSource(connection: DuckDBConnection, source: string, built: BuiltIndex): Promise<void>;
  /** Finishes the index file: the names of every file written, in `dir`. */
  finish(): Promise<string[]>;
  /** The build failed: closes the index file unfinished (the caller removes the folder). */
  abort(): Promise<void>;
}

/** Starts the search files in `dir` (created when missing). */
export async function openSearchFiles(dir: string): Promise<SearchFilesWriter> {
  await mkdir(dir, { recursive: true });
  const index = await openIndexFile(join(dir, INDEX_FILE_NAME));
  const pageFiles: string[] = [];
  return {
    async addSource(connection, source, built) {
      if (!isStoredSource(source)) throw new Error(`${source} is not a stored lookup source`);
      await index.add(source, await buildExportedSourceFiles(connection, source, dir, built));
      await built.release();
      pageFiles.push(pagesFileName(source));
    },
    async finish() {
      await index.close();
      return [INDEX_FILE_NAME, ...pageFiles];
    },
    abort: () => index.abort(),
  };
}

function isStoredSource(source: string): source is StoredLookupSource {
  return (STORED_SOURCES as readonly string[]).includes(source);
}
