/**
 * A stored lookup stays under the query deadline in both of its parts: the in-memory ranking,
 * which the deadline's timer cannot interrupt (it holds the event loop), checks the clock between
 * blocks of postings and stops with QUERY_TIMEOUT, never answering a partial page.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startExportedRunner, type ExportedRunner } from '../../test/exported-runner.ts';
import { lookupOn } from './run-lookup.ts';

let served: ExportedRunner;

beforeAll(async () => {
  served = await startExportedRunner('run-lookup');
});

afterAll(async () => {
  await served.stop();
});

describe('stored lookups under the deadline', () => {
  it('a lookup whose deadline passes while ranking fails with QUERY_TIMEOUT, and the next lookup answers', async () => {
    const lease = served.runner.databases.lease()!;
    try {
      // "the" reads the postings of every term starting with "the": many blocks of work.
      await expect(lookupOn(lease.database, { source: 'gutenberg', keywords: 'the', limit: 10 }, 0)).rejects.toMatchObject({ code: 'QUERY_TIMEOUT' });
    } finally {
      lease.release();
    }
    const { results } = await served.ok('gutenberg', 'the art of war');
    expect(results[0]!.title).toBe('The Art of War');
  });
});
