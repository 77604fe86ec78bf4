/**
 * The runners' files of a version: the lookups' index arrays (`search-index.bin`) and one page file
 * per stored source (`pages-{source}.jsonl`), built from the `_search_*` tables of the finished
 * `service.db` by the code a runner would otherwise run when it opens the version
 * (`@uda/shared/search-index`). Building them here once saves every runner start the work (~26 s
 * at scale 1): a runner downloads them with the database and loads the arrays with a few reads.
 */
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { RunnerFile } from '@uda/shared/manifest';
import { buildSourceFiles, INDEX_FILE_NAME, pagesFileName, writeIndexFile } from '@uda/shared/search-index';
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

/** Writes the runner files into `<buildDir>/runner/` from the database behind `connection`, whose search tables are built. */
export async function writeRunnerFiles(connection: DuckDBConnection, buildDir: string): Promise<BuiltRunnerFile[]> {
  const dir = join(buildDir, 'runner');
  await mkdir(dir, { recursive: true });
  const sources = await buildSourceFiles(connection, dir);
  await writeIndexFile(join(dir, INDEX_FILE_NAME), sources);
  const names = [INDEX_FILE_NAME, ...[...sources.keys()].map(pagesFileName)];
  return Promise.all(names.map((name) => describeRunnerFile(dir, name)));
}
