/**
 * Long-lived connections for stored lookups, one pool per database version, each connection
 * keeping the statements it has prepared. Planning a page's SQL costs more than running it on ten
 * rows, so each distinct statement (one per source, see `stored-sql.ts`) is planned once per
 * connection and afterwards only bound and run.
 *
 * Bounds: lookups run inside the runner's limiter, so the pool never holds more connections than
 * MAX_CONCURRENT_QUERIES, and each connection holds at most one statement per distinct lookup SQL.
 * The pool is a resource of its database version (`versionResource`): the DatabaseManager closes it,
 * statements first, before it closes the version's instance, so a swap never runs an old statement
 * on a new database. A connection whose lookup failed or was interrupted is closed, not reused.
 */
import { INTEGER, LIST, listValue, type DuckDBConnection, type DuckDBInstance, type DuckDBPreparedStatement } from '@duckdb/node-api';
import { versionResource, type OpenDatabase, type VersionResource } from '../database-manager.ts';
import { jsonValue } from '../json-values.ts';

export interface LookupSession {
  readonly connection: DuckDBConnection;
  /** Runs `sql`, whose one parameter is a list of document numbers, through this connection's prepared statement for it, as JSON-ready row objects. */
  rows(sql: string, docs: readonly number[]): Promise<Record<string, unknown>[]>;
}

class PooledConnection implements LookupSession {
  readonly connection: DuckDBConnection;
  private readonly statements = new Map<string, DuckDBPreparedStatement>();

  constructor(connection: DuckDBConnection) {
    this.connection = connection;
  }

  async rows(sql: string, docs: readonly number[]): Promise<Record<string, unknown>[]> {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = await this.connection.prepare(sql);
      this.statements.set(sql, statement);
    }
    statement.bind([listValue([...docs])], [LIST(INTEGER)]);
    const reader = await statement.runAndReadAll();
    return reader.convertRowObjects(jsonValue) as Record<string, unknown>[];
  }

  get preparedCount(): number {
    return this.statements.size;
  }

  close(): void {
    for (const statement of this.statements.values()) statement.destroySync();
    this.statements.clear();
    this.connection.closeSync();
  }
}

export class LookupConnections implements VersionResource {
  private readonly instance: DuckDBInstance;
  private readonly idle: PooledConnection[] = [];
  private closed = false;

  constructor(instance: DuckDBInstance) {
    this.instance = instance;
  }

  /** How many statements the idle connections hold prepared (for tests and metrics). */
  get preparedStatements(): number {
    return this.idle.reduce((sum, pooled) => sum + pooled.preparedCount, 0);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Runs `work` on an idle connection (or a new one), returned to the pool only if `work` succeeded. */
  async use<T>(work: (session: LookupSession) => Promise<T>): Promise<T> {
    const pooled = this.idle.pop() ?? new PooledConnection(await this.instance.connect());
    let result: T;
    try {
      result = await work(pooled);
    } catch (error) {
      pooled.close();
      throw error;
    }
    if (this.closed) pooled.close();
    else this.idle.push(pooled);
    return result;
  }

  close(): void {
    this.closed = true;
    for (const pooled of this.idle.splice(0)) pooled.close();
  }
}

/** The lookup connections of one database version, opened on its first lookup. */
export function lookupConnections(database: OpenDatabase): LookupConnections {
  return versionResource(database, 'lookups', (instance) => new LookupConnections(instance));
}
