/**
 * The live answers the API keeps for its stale fallback (table `live_copies`, see
 * `@uda/shared/db/live-copies`), read source by source, oldest first, so that the newest answer
 * for a key wins when the rows are merged.
 */
import pg from 'pg';
import type { Row } from './table-spec.ts';

export interface LiveCopyReader {
  results(source: string): AsyncIterable<Row>;
  close(): Promise<void>;
}

interface CopyRow {
  payload: { results?: unknown };
}

export class PostgresLiveCopies implements LiveCopyReader {
  private readonly pool: pg.Pool;

  constructor(databaseUrl: string) {
    this.pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  }

  async *results(source: string): AsyncGenerator<Row> {
    const { rows } = await this.pool.query<CopyRow>(
      'SELECT payload FROM live_copies WHERE source = $1 ORDER BY fetched_at',
      [source],
    );
    for (const { payload } of rows) {
      if (Array.isArray(payload.results)) yield* payload.results as Row[];
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
