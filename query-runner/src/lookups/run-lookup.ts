/**
 * Runs a stored-source lookup on the current database version, inside the query deadline and on
 * the limiter of our own work, which user SQL cannot take (DECISIONS §4 Fair shares): the version's
 * in-memory index ranks the matches (`@uda/search/rank`), bounded by the deadline's clock, then the
 * page's rows, at most `limit` of them, are read from the version's page store (`page-store.ts`)
 * and spliced into the response body as the JSON bytes they are stored as. DuckDB is not involved
 * per lookup: both were prepared from the version's tables when it was opened. With a `ranker`, the
 * ranking runs in its threads (`rank-pool.ts`) and the main thread only reads the page; without
 * one, here. A body already answered for the same version and terms is served from `cache`.
 */
import type { LookupRequest } from '@uda/shared/runner-contract';
import { jsonWithRawField } from '@uda/shared/raw-json';
import type { DatabaseManager, OpenDatabase } from '../database-manager.ts';
import { unavailableError } from '../errors.ts';
import { deadlineCheck, runnerErrorOf } from '../deadline.ts';
import type { PageRanking, RankPool } from './rank-pool.ts';
import type { Limiter } from '../limiter.ts';
import { pageCacheKey, type PageCache } from './page-cache.ts';
import { readPageJson } from './page-store.ts';
import { parseQuery, type ParsedQuery } from '@uda/search/query';
import { rankDocuments } from '@uda/search/rank';
import type { SourceIndex } from '@uda/search/index';
import { searchIndexesOf } from './search-index.ts';

export interface LookupDeps {
  readonly databases: DatabaseManager;
  readonly limiter: Limiter;
  readonly timeoutMs: number;
  /** Absent: the ranking runs on the calling thread. */
  readonly ranker?: RankPool;
  /** Absent: every lookup is ranked. */
  readonly cache?: PageCache;
}

/** A lookup's response body, `{"results":[…],"total":n}`, with the rows as stored. */
export type LookupBody = Buffer;

const bodyOf = (rows: Uint8Array, total: number): LookupBody => jsonWithRawField({}, 'results', rows, { total });
const NO_MATCH = bodyOf(Buffer.from('[]'), 0);

export async function runLookup(deps: LookupDeps, request: LookupRequest): Promise<LookupBody> {
  // The keywords are split into terms here, once: the ranking threads receive the terms.
  const query = parseQuery(request.keywords);
  if (query.words.length === 0) return NO_MATCH;
  const cached = deps.cache && cachedBody(deps.databases, deps.cache, request, query);
  if (cached) return cached;
  return deps.limiter.run(async () => {
    const lease = deps.databases.lease();
    if (!lease) throw unavailableError('The query service is starting and has no database open yet.');
    try {
      const body = await lookupOn(lease.database, request, deps.timeoutMs, deps.ranker, query);
      deps.cache?.set(pageCacheKey(lease.database.version, request, query), body);
      return body;
    } finally {
      lease.release();
    }
  });
}

/** The body the current version already answered for these terms, if the cache holds it. */
function cachedBody(databases: DatabaseManager, cache: PageCache, request: LookupRequest, query: ParsedQuery): LookupBody | undefined {
  const lease = databases.lease();
  if (!lease) return undefined;
  try {
    return cache.get(pageCacheKey(lease.database.version, request, query));
  } finally {
    lease.release();
  }
}

/** The lookup on one database version, whose index and pages `loadSearchIndexes` prepared when it was opened. */
export async function lookupOn(
  database: OpenDatabase, request: LookupRequest, timeoutMs: number, ranker?: RankPool, query: ParsedQuery = parseQuery(request.keywords),
): Promise<LookupBody> {
  const indexes = searchIndexesOf(database);
  const index = indexes?.get(request.source);
  const pages = indexes?.pages(request.source);
  if (!indexes || !index || !pages) throw unavailableError(`The ${request.source} source has no search index in the current data version.`);
  try {
    const ranking: PageRanking = ranker
      ? await ranker.rank(indexes, request.source, query, request.limit, { expiresAt: performance.now() + timeoutMs, timeoutMs })
      : rankHere(index, query, request.limit, timeoutMs);
    return bodyOf(readPageJson(pages, ranking.docs), ranking.total);
  } catch (error) {
    throw runnerErrorOf(error);
  }
}

function rankHere(index: SourceIndex, query: ParsedQuery, limit: number, timeoutMs: number): PageRanking {
  const ranking = rankDocuments(index, query, limit, deadlineCheck(timeoutMs));
  return { total: ranking.total, docs: ranking.docs.map((ranked) => ranked.doc) };
}
