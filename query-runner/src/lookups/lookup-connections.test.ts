/**
 * The lookups' pooled connections, prepared statements and in-memory search index belong to one
 * database version: lookups keep answering while a new version is swapped in, and the old
 * version's statements, connections and index are closed once its last lookup ends.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startExportedRunner, type ExportedRunner } from '../../test/exported-runner.ts';
import type { DatabaseManager } from '../database-manager.ts';
import { lookupConnections, type LookupConnections } from './lookup-connections.ts';
import { searchIndexesOf, type SearchIndexes } from './search-index.ts';

let served: ExportedRunner;

beforeAll(async () => {
  served = await startExportedRunner('lookup-pool');
});

afterAll(async () => {
  await served.stop();
});

/** The lookup pool of the version being served now. */
function currentPool(databases: DatabaseManager): { version: string; pool: LookupConnections; index: SearchIndexes } {
  const lease = databases.lease()!;
  try {
    return { version: lease.database.version, pool: lookupConnections(lease.database), index: searchIndexesOf(lease.database)! };
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

describe('lookup connections across a database version swap', () => {
  it('reuses prepared statements for repeated lookups instead of preparing them again', async () => {
    for (let i = 0; i < 5; i++) await served.ok('gutenberg', 'the art of war');
    await served.ok('gutenberg', 'sleepy hollow');
    await served.ok('sec', 'tsla');
    // One page statement per source, whatever the keywords: gutenberg's and sec's.
    expect(currentPool(served.runner.databases).pool.preparedStatements).toBe(2);
  });

  it('keeps answering lookups during a swap, then closes the old version statements and drops its index', async () => {
    const { databases } = served.runner;
    const before = currentPool(databases);
    expect(before.pool.preparedStatements).toBeGreaterThan(0);

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
    await until(() => before.pool.isClosed);
    expect(before.pool.preparedStatements).toBe(0);
    expect(before.index.isClosed).toBe(true);
    expect(currentPool(databases).index.isClosed).toBe(false);
    await served.ok('gutenberg', 'the art of war');
    expect(currentPool(databases).pool.preparedStatements).toBeGreaterThan(0);
  });
});
