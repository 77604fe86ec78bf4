/**
 * The runners' files of a version (`@uda/search/index`'s search files: the lookups' index arrays
 * and page files), written in `<buildDir>/runner/` and described for the manifest.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { RunnerFile } from '@uda/shared/manifest';
import { openSearchFiles, type BuiltIndex } from '@uda/search/index';
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
  /** Builds the source's arrays from what its index build returned, and its page file (through `connection`), and appends them. */
  addSource(connection: DuckDBConnection, source: string, built: BuiltIndex): Promise<void>;
  /** Finishes the index file and describes every runner file for the manifest. */
  finish(): Promise<BuiltRunnerFile[]>;
  /** The build failed: closes the index file unfinished (the build folder is removed). */
  abort(): Promise<void>;
}

/** Starts the runner files in `<buildDir>/runner/`. */
export async function openRunnerFiles(buildDir: string): Promise<RunnerFilesWriter> {
  const dir = join(buildDir, 'runner');
  const files = await openSearchFiles(dir);
  return {
    addSource: (connection, source, built) => files.addSource(connection, source, built),
    finish: async () => Promise.all((await files.finish()).map((name) => describeRunnerFile(dir, name))),
    abort: () => files.abort(),
  };
}
