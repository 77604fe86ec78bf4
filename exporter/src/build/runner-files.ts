/**
 * The runners' files of a version: the lookups' index arrays (`search-index.bin`) and one page file
 * per stored source (`pages-{source}.jsonl`), built from the `_search_*` tables of the finished
 * `service.db` by the code a runner would otherwise run when it opens the version
 * (`@uda/shared/search-index`). Building them here once saves every runner start the work (~26 s
 * at scale 1): a runner downloads them with the database and loads the arrays with a few reads.
 *
 * A source's part is built as soon as its search tables are, beside the later loads, and appended
 * to the index file at once, so the exporter holds one source's arrays at a time, never them all.
 */
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { RunnerFile } from '@uda/shared/manifest';
import { STORED_SOURCES } from '@uda/shared/runner-contract';
import { buildOneSourceFiles, INDEX_FILE_NAME, openIndexFile, pagesFileName, type StoredLookupSource } from '@uda/shared/search-index';
import { sha256File } from './files.ts';

/** A runner file before upload: everything the manifest needs except its key and ETag. */
export type BuiltRunnerFile = Omit<RunnerFile, 'key' | 'etag'> & { readonly path: string };

const CONTENT_TYPES = { bin: 'application/octet-stream', jsonl: 'application/jsonl' } as const;

async function describeRunnerFile(dir: string, fileName: string): Promise<BuiltRunnerFile> {
  const path = join(dir, fileName);
  const [{ size }, sha256] = await Promise.all([stat(path), sha256File(path)]);
  const contentType = fileName.endsWith('.jsonl') ? CONTENT_TYPES.jsonl : CONTENT_TYPES.bin;
  return { name: `runner/${fileName}`, path, size, sha256, content_type: contentType };
}

export interface RunnerFilesWriter {
  /** Builds the source's arrays and page file from its `_search_*` tables (built, through `connection`) and appends them. */
  addSource(connection: DuckDBConnection, source: string): Promise<void>;
  /** Finishes the index file and describes every runner file for the manifest. */
  finish(): Promise<BuiltRunnerFile[]>;
  /** The build failed: closes the index file unfinished (the build folder is removed). */
  abort(): Promise<void>;
}

/** Starts the runner files in `<buildDir>/runner/`. */
export async function openRunnerFiles(buildDir: string): Promise<RunnerFilesWriter> {
  const dir = join(buildDir, 'runner');
  await mkdir(dir, { recursive: true });
  const index = await openIndexFile(join(dir, INDEX_FILE_NAME));
  const pageFiles: string[] = [];
  return {
    async addSource(connection, source) {
      if (!isStoredSource(source)) throw new Error(`${source} is not a stored lookup source`);
      const files = await buildOneSourceFiles(connection, source, dir);
      if (!files) return;
      await index.add(source, files);
      pageFiles.push(pagesFileName(source));
    },
    async finish() {
      await index.close();
      return Promise.all([INDEX_FILE_NAME, ...pageFiles].map((name) => describeRunnerFile(dir, name)));
    },
    abort: () => index.abort(),
  };
}

function isStoredSource(source: string): source is StoredLookupSource {
  return (STORED_SOURCES as readonly string[]).includes(source);
}
