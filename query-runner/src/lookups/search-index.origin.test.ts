/**
 * A runner loads a version's lookup index from the runner files the exporter built for it
 * (`search-index.bin`, `pages-{source}.jsonl`), and an export without them (an older exporter's)
 * still works: the runner builds the index from `service.db` itself. Both ways give the same
 * arrays, the same page rows and the same lookup answers.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { STORED_SOURCES } from '@uda/shared/runner-contract';
import type { SourceIndex } from '@uda/search/index';
import { startExportedRunner, type ExportedRunner } from '../../test/exported-runner.ts';
import { readPageJson } from './page-store.ts';
import { loadSearchIndexes, searchIndexesOf, type SearchIndexes } from './search-index.ts';

let withFiles: ExportedRunner;
let withoutFiles: ExportedRunner;

beforeAll(async () => {
  withFiles = await startExportedRunner('origin-files');
  withoutFiles = await startExportedRunner('origin-database', { runnerFiles: false });
});

afterAll(async () => {
  await withFiles?.stop();
  await withoutFiles?.stop();
});

function withIndexes<T>(served: ExportedRunner, use: (indexes: SearchIndexes, path: string) => Promise<T>): Promise<T> {
  const lease = served.runner.databases.lease()!;
  return use(searchIndexesOf(lease.database)!, lease.database.path).finally(() => lease.release());
}

/** The names of the arrays of `a` whose bytes differ from `b`'s. */
function differingArrays(a: SourceIndex, b: SourceIndex): string[] {
  const bytesOf = (array: ArrayBufferView) => Buffer.from(array.buffer, array.byteOffset, array.byteLength);
  const arrays = (index: SourceIndex): Record<string, ArrayBufferView> => ({
    termBytes: index.terms.bytes, termEnds: index.terms.ends, postingEnds: index.postingEnds, postingDocs: index.postingDocs, postingTf: index.postingTf,
    postingPrimary: index.postingPrimary, norms: index.norms, idTerms: index.idTerms, stemBytes: index.stems.bytes, stemEnds: index.stems.ends,
    stemTermEnds: index.stemEnds, stemTerms: index.stemTerms, titleBytes: index.titles.bytes, titleEnds: index.titles.ends, titleDocs: index.titleDocs,
  });
  const other = arrays(b);
  return Object.entries(arrays(a)).filter(([name, array]) => !bytesOf(array).equals(bytesOf(other[name]!))).map(([name]) => name);
}

describe('where the lookup index comes from', () => {
  it('an export with runner files: the runner loads them, then deletes the index file it holds in memory', async () => {
    await withIndexes(withFiles, async (indexes, path) => {
      expect(indexes.origin).toBe('file');
      const files = await readdir(dirname(path));
      expect(files.sort()).toEqual(['service.db', ...STORED_SOURCES.map((source) => `pages-${source}.jsonl`)].sort());
    });
  });

  it('an export without them: the runner builds the index from service.db', async () => {
    await withIndexes(withoutFiles, async (indexes) => expect(indexes.origin).toBe('database'));
  });

  it('the loaded arrays and page rows equal the ones built from the same service.db', async () => {
    await withIndexes(withFiles, async (loaded, path) => {
      const pagesDir = await mkdtemp(join(tmpdir(), 'uda-origin-pages-'));
      const reader = await DuckDBInstance.create(path, { access_mode: 'READ_ONLY' });
      const lease = withFiles.runner.databases.lease()!;
      try {
        const built = await loadSearchIndexes({ ...lease.database, resources: new Map() }, reader, pagesDir);
        for (const source of STORED_SOURCES) {
          const [a, b] = [loaded.get(source)!, built.get(source)!];
          expect({ source, documents: a.documents, differing: differingArrays(a, b) }).toEqual({ source, documents: b.documents, differing: [] });
          const docs = Array.from({ length: a.documents }, (_, i) => i + 1);
          expect(readPageJson(loaded.pages(source)!, docs)).toEqual(readPageJson(built.pages(source)!, docs));
        }
        built.close();
      } finally {
        lease.release();
        reader.closeSync();
        await rm(pagesDir, { recursive: true, force: true });
      }
    });
  });

  it('lookups answer the same either way', async () => {
    const lookups: [string, string][] = [['gutenberg', 'the art of war'], ['gutenberg', 'pride prejudice'], ['food', 'strawberries raw'], ['census', 'texas'], ['sec', 'apple'], ['pwc', 'neural network']];
    for (const [source, keywords] of lookups) {
      expect(await withoutFiles.ok(source, keywords)).toEqual(await withFiles.ok(source, keywords));
    }
  });
});
