/**
 * Runs a stored-source lookup on the current database version, inside the same deadline and
 * concurrency limiter as user SQL: the version's in-memory index ranks the matches (`rank.ts`),
 * then one prepared statement on the version's pooled connections (`lookup-connections.ts`) reads
 * the page's rows, at most `limit` of them. Both run in the runner process (user SQL runs in the
 * worker pool): the ranking is bounded by the deadline's clock, the page by its interrupt.
 */
import type { LookupRequest, LookupResponse } from '@uda/shared/runner-contract';
import type { DatabaseManager, OpenDatabase } from '../database-manager.ts';
import { unavailableError } from '../errors.ts';
import { deadlineCheck, withDeadline } from '../deadline.ts';
import type { Limiter } from '../limiter.ts';
import { lookupConnections } from './lookup-connections.ts';
import { queryTerms } from './query-terms.ts';
import { rankDocuments } from './rank.ts';
import { searchIndexesOf } from './search-index.ts';
import { pageQuery } from './stored-sql.ts';

export interface LookupDeps {
  readonly databases: DatabaseManager;
  readonly limiter: Limiter;
  readonly timeoutMs: number;
}

export async function runLookup(deps: LookupDeps, request: LookupRequest): Promise<LookupResponse> {
  if (queryTerms(request.keywords).length === 0) return { results: [], total: 0 };
  return deps.limiter.run(async () => {
    const lease = deps.databases.lease();
    if (!lease) throw unavailableError('The query service is starting and has no database open yet.');
    try {
      return await lookupOn(lease.database, request, deps.timeoutMs);
    } finally {
      lease.release();
    }
  });
}

/** The lookup on one database version, whose index `loadSearchIndexes` loaded when it was opened. */
export async function lookupOn(database: OpenDatabase, request: LookupRequest, timeoutMs: number): Promise<LookupResponse> {
  const index = searchIndexesOf(database)?.get(request.source);
  if (!index) throw unavailableError(`The ${request.source} source has no search index in the current data version.`);
  return lookupConnections(database).use((session) =>
    withDeadline(session.connection, timeoutMs, async () => {
      const ranking = rankDocuments(index, request.keywords, request.limit, deadlineCheck(timeoutMs));
      if (ranking.docs.length === 0) return { results: [], total: ranking.total };
      const page = pageQuery(request.source, ranking.docs.map((ranked) => ranked.doc));
      return { results: await session.rows(page.sql, page.docs), total: ranking.total };
    }),
  );
}
