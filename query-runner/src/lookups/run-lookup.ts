/**
 * Runs a stored-source lookup on the current database version, inside the same sandbox, deadline
 * and concurrency limiter as user SQL.
 */
import type { LookupRequest, LookupResponse } from '@uda/shared/runner-contract';
import type { DatabaseManager } from '../database-manager.ts';
import { unavailableError } from '../errors.ts';
import { withDeadline } from '../deadline.ts';
import { jsonValue } from '../json-values.ts';
import type { Limiter } from '../limiter.ts';
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
    const connection = await lease.database.instance.connect();
    try {
      const rows = await withDeadline(connection, deps.timeoutMs, async () => {
        const reader = await connection.runAndReadAll(query.sql, query.params);
        return reader.convertRowObjects(jsonValue) as Record<string, unknown>[];
      });
      const total = Number(rows[0]?.total ?? 0);
      return { results: rows.map(({ total: _total, ...row }) => row), total };
    } finally {
      connection.closeSync();
      lease.release();
    }
  });
}

