/**
 * The lookups' in-memory search index and page store belong to one database version, loaded
 * before the version is swapped in: lookups keep answering while a new version is swapped in, and
 * the old version's index is dropped (its page files closed, the ranking threads' references to its
 * shared arrays let go) once its last lookup ends.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startExportedRunner, type ExportedRunner } from '../../test/exported-runner.ts';
import type { DatabaseManager } from '../database-manager.ts';
import { searchIndexesOf, type SearchIndexes } from './search-index.ts';

let served: ExportedRunner;

beforeAll(async () => {
  served = await startExportedRunner('search-index-swap');
});

afterAll(async () => {
  await served.stop();
});

/** The search index of the version being served now. */
function currentIndex(databases: DatabaseManager): { version: string; index: SearchIndexes } {
  const lease = databases.lease()!;
  try {
    return { version: lease.database.version, index: searchIndexesOf(lease.database)! };
  } finally {
    lease.release();
  }
}

async function until(condition: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the search index across a database version swap', () => {
  it('is loaded, with a page store, before the version serves its first lookup', () => {
    const { index } = currentIndex(served.runner.databases);
    expect(index.isClosed).toBe(false);
    expect(index.get('gutenberg')?.documents).toBeGreaterThan(0);
    expect(index.pages('gutenberg')).toBeDefined();
  });

  it('keeps answering lookups during a swap, then drops the old version index', async () => {
    const { databases } = served.runner;
    const before = currentIndex(databases);

    const failures: unknown[] = [];
    const servedBy = new Set<string>();
    let stop = false;
    const worker = async () => {
      while (!stop) {
        const { status, body } = await served.lookup({ source: 'gutenberg', keywords: 'the art of war', limit: 5 });
        if (status !== 200) failures.push(body);
        else expect((body as { results: { title: string }[] }).results[0]!.title).toBe('The Art of War');
        servedBy.add(databases.version!);
      }
    };
    const workers = Array.from({ length: 4 }, worker);
    await served.exportAgain();
    await until(() => databases.version !== before.version && servedBy.has(databases.version!));
    stop = true;
    await Promise.all(workers);

    expect(failures).toEqual([]);
    await until(() => before.index.isClosed);
    expect(currentIndex(databases).index.isClosed).toBe(false);
    // The ranking threads let go of the old version's shared arrays: only the new gutenberg index is held.
    expect(served.runner.ranker?.heldIndexes).toBe(1);
    const { results } = await served.ok('gutenberg', 'the art of war');
    expect(results[0]!.title).toBe('The Art of War');
  });
});
