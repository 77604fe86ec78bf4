/**
 * Runs a stored-source lookup on the current database version, inside the same deadline and
 * concurrency limiter as user SQL. Lookups are our own parameterised SQL, so they run in the
 * runner process (user SQL runs in the worker pool), on the version's pooled connections with
 * their prepared statements (`lookup-connections.ts`); every page is bounded by its LIMIT.
 */
import type { LookupRequest, LookupResponse } from '@uda/shared/runner-contract';
import type { DatabaseManager } from '../database-manager.ts';
import { unavailableError } from '../errors.ts';
import { withDeadline } from '../deadline.ts';
import type { Limiter } from '../limiter.ts';
import { lookupConnections } from './lookup-connections.ts';
import { storedLookupQuery } from './stored-sql.ts';

export interface LookupDeps {
  readonly databases: DatabaseManager;
  readonly limiter: Limiter;
  readonly timeoutMs: number;
}

export async function runLookup(deps: LookupDeps, request: LookupRequest): Promise<LookupResponse> {
  const query = storedLookupQuery(request.source, request.keywords, request.limit);
  if (!query) return { results: [], total: 0 };
  return deps.limiter.run(async () => {
    const lease = deps.databases.lease();
    if (!lease) throw unavailableError('The query service is starting and has no database open yet.');
    try {
      const rows = await lookupConnections(lease.database).use((session) =>
        withDeadline(session.connection, deps.timeoutMs, () => session.rows(query.sql, query.params)),
      );
      const total = Number(rows[0]?.total ?? 0);
      return { results: rows.map(({ total: _total, ...row }) => row), total };
    } finally {
      lease.release();
    }
  });
}
