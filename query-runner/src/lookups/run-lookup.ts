/**
 * Runs a stored-source lookup on the current database version, inside the query deadline and on
 * the limiter of our own work, which user SQL cannot take (DECISIONS §4 Fair shares): the version's in-memory index ranks the matches (`rank.ts`),
 * bounded by the deadline's clock, then the page's rows, at most `limit` of them, are read from
 * the version's page store (`page-store.ts`). DuckDB is not involved per lookup: both were
 * prepared from the version's tables by our own SQL when it was opened. With a `ranker`, the ranking
 * runs in its threads (`rank-pool.ts`) and the main thread only reads the page; without one, here.
 */
import type { LookupRequest, LookupResponse } from '@uda/shared/runner-contract';
import type { DatabaseManager, OpenDatabase } from '../database-manager.ts';
import { unavailableError } from '../errors.ts';
import { deadlineCheck, runnerErrorOf } from '../deadline.ts';
import type { PageRanking, RankPool } from './rank-pool.ts';
import type { Limiter } from '../limiter.ts';
import { readPage } from './page-store.ts';
import { queryTerms } from './query-terms.ts';
import { rankDocuments } from './rank.ts';
import type { SourceIndex } from '@uda/shared/search-index';
import { searchIndexesOf } from './search-index.ts';

export interface LookupDeps {
  readonly databases: DatabaseManager;
  readonly limiter: Limiter;
  readonly timeoutMs: number;
  /** Absent: the ranking runs on the calling thread. */
  readonly ranker?: RankPool;
}

export async function runLookup(deps: LookupDeps, request: LookupRequest): Promise<LookupResponse> {
  if (queryTerms(request.keywords).length === 0) return { results: [], total: 0 };
  return deps.limiter.run(async () => {
    const lease = deps.databases.lease();
    if (!lease) throw unavailableError('The query service is starting and has no database open yet.');
    try {
      return await lookupOn(lease.database, request, deps.timeoutMs, deps.ranker);
    } finally {
      lease.release();
    }
  });
}

/** The lookup on one database version, whose index and pages `loadSearchIndexes` prepared when it was opened. */
export async function lookupOn(database: OpenDatabase, request: LookupRequest, timeoutMs: number, ranker?: RankPool): Promise<LookupResponse> {
  const indexes = searchIndexesOf(database);
  const index = indexes?.get(request.source);
  const pages = indexes?.pages(request.source);
  if (!indexes || !index || !pages) throw unavailableError(`The ${request.source} source has no search index in the current data version.`);
  try {
    const ranking: PageRanking = ranker
      ? await ranker.rank(indexes, request.source, request.keywords, request.limit, { expiresAt: performance.now() + timeoutMs, timeoutMs })
      : rankHere(index, request, timeoutMs);
    return { results: readPage(pages, ranking.docs), total: ranking.total };
  } catch (error) {
    throw runnerErrorOf(error);
  }
}

function rankHere(index: SourceIndex, request: LookupRequest, timeoutMs: number): PageRanking {
  const ranking = rankDocuments(index, request.keywords, request.limit, deadlineCheck(timeoutMs));
  return { total: ranking.total, docs: ranking.docs.map((ranked) => ranked.doc) };
}
