/**
 * Ranking in threads (`rank-pool.ts`) answers exactly what ranking on the calling thread answers:
 * the same total and the same page, for the judged queries of every kind (typos, splits, plurals,
 * dropped words) and for seeded words of the index's own terms, each also with a letter changed
 * (a typo) and joined to the next (a split), all sent at once so the threads rank concurrently. A
 * lookup out of time in a thread still fails with QUERY_TIMEOUT. (A closed version's arrays are
 * dropped by the threads: `search-index.swap.test.ts`.)
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { STORED_SOURCES } from '@uda/shared/runner-contract';
import { DeadlineExceeded } from '@uda/shared/duckdb';
import { startExportedRunner, type ExportedRunner } from '../../test/exported-runner.ts';
import type { OpenDatabase } from '../database-manager.ts';
import { createRankPool, type RankPool } from './rank-pool.ts';
import { JUDGEMENTS } from './relevance.judgments.ts';
import { lookupOn } from './run-lookup.ts';
import { searchIndexesOf } from './search-index.ts';
import { type StoredLookupSource, textAt, textCount } from '@uda/search/index';
import { parseQuery } from '@uda/search/query';
import { seeded } from '../../test/seeded.ts';

const SEEDED_PER_SOURCE = 40;
/** Generous: the CI machine is shared and often loaded; no timing is asserted. */
const TIMEOUT_MS = 60_000;

let served: ExportedRunner;
let database: OpenDatabase;
let release: () => void;
let ranker: RankPool;

beforeAll(async () => {
  served = await startExportedRunner('rank-pool');
  const lease = served.runner.databases.lease()!;
  database = lease.database;
  release = lease.release;
  ranker = createRankPool(2, 10_000);
});

afterAll(async () => {
  await ranker.close();
  release();
  await served.stop();
});

/** Words of the index's own terms, each as it is, with a letter changed, and joined to the next. */
function seededQueries(source: StoredLookupSource): string[] {
  const terms = searchIndexesOf(database)!.get(source)!.terms;
  const random = seeded(source.length * 7919 + 17);
  const term = () => textAt(terms, Math.floor(random() * textCount(terms)));
  const typo = (word: string) => (word.length < 4 ? word : `${word.slice(0, 2)}${word[3]}${word[2]}${word.slice(4)}`);
  return Array.from({ length: SEEDED_PER_SOURCE }, (_, i) => {
    const [a, b] = [term(), term()];
    return [a, `${a} ${b}`, typo(a), `${a}${b}`, `${typo(a)} ${b}`][i % 5]!;
  });
}

const queriesOf = (source: StoredLookupSource) => [...(JUDGEMENTS[source as keyof typeof JUDGEMENTS]?.queries.map((q) => q.keywords) ?? []), ...seededQueries(source)];

describe('ranking in threads', () => {
  it('answers the same total and page as ranking on the calling thread, for every kind of query', async () => {
    const cases = STORED_SOURCES.flatMap((source) => queriesOf(source).map((keywords) => ({ source, keywords, limit: 10 })));
    expect(cases.length).toBeGreaterThan(STORED_SOURCES.length * SEEDED_PER_SOURCE);
    const here = await Promise.all(cases.map((request) => lookupOn(database, request, TIMEOUT_MS)));
    const inThreads = await Promise.all(cases.map((request) => lookupOn(database, request, TIMEOUT_MS, ranker)));
    inThreads.forEach((answer, i) => expect({ ...cases[i], ...answer }).toEqual({ ...cases[i], ...here[i] }));
  });

  it('a lookup out of time fails with QUERY_TIMEOUT, and the next one answers', async () => {
    await expect(lookupOn(database, { source: 'gutenberg', keywords: 'the', limit: 10 }, 0, ranker)).rejects.toMatchObject({ code: 'QUERY_TIMEOUT' });
    const body = await lookupOn(database, { source: 'gutenberg', keywords: 'the art of war', limit: 5 }, TIMEOUT_MS, ranker);
    const { results } = JSON.parse(body.toString('utf8')) as { results: { title: string }[] };
    expect(results[0]!.title).toBe('The Art of War');
  });

  it('a lookup waiting for a thread is out of time (QUERY_TIMEOUT) when its deadline passes, before the lookups ahead of it end', async () => {
    const oneThread = createRankPool(1, 10_000);
    const indexes = searchIndexesOf(database)!;
    const rank = (timeoutMs: number) => oneThread.rank(indexes, 'gutenberg', parseQuery('the war of art and peace'), 10, { expiresAt: performance.now() + timeoutMs, timeoutMs });
    // Each lookup ahead of the late one needs its own round trip to the thread, so they end long after its 1 ms.
    let ahead = 200;
    const lookupsAhead = Array.from({ length: ahead }, () => rank(TIMEOUT_MS).finally(() => (ahead -= 1)));
    const late = await rank(1).catch((e: unknown) => e);
    try {
      expect({ outOfTime: late instanceof DeadlineExceeded, aheadStillRunning: ahead > 0 }).toEqual({ outOfTime: true, aheadStillRunning: true });
      await Promise.all(lookupsAhead);
    } finally {
      await oneThread.close();
    }
  });

});
