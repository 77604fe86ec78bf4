/**
 * Stored copies of successful live answers: the stale fallback (SPEC "Stale results") and the
 * exporter's input for the live sources' SQL tables (DECISIONS §2).
 */
import type { Knex } from 'knex';
import type { LivePayload, LiveSource } from './types.ts';

export interface StoredCopy {
  payload: LivePayload;
  fetchedAt: Date;
}

export interface StaleCopyStore {
  save(source: LiveSource, normalizedQuery: string, payload: LivePayload, fetchedAt: Date): Promise<void>;
  find(source: LiveSource, normalizedQuery: string): Promise<StoredCopy | null>;
}

export class MemoryStaleCopyStore implements StaleCopyStore {
  readonly #copies = new Map<string, StoredCopy>();

  async save(source: LiveSource, normalizedQuery: string, payload: LivePayload, fetchedAt: Date): Promise<void> {
    // A deep copy, as a database would keep it: later changes to the answer must not alter it.
    this.#copies.set(`${source}\n${normalizedQuery}`, { payload: structuredClone(payload), fetchedAt });
  }

  async find(source: LiveSource, normalizedQuery: string): Promise<StoredCopy | null> {
    return this.#copies.get(`${source}\n${normalizedQuery}`) ?? null;
  }
}

interface CopyRow {
  payload: LivePayload | string;
  fetched_at: Date | string;
}

/** Table `live_copies` (`@uda/shared/db/live-copies`): one row per source and query, newest answer wins. */
export class KnexStaleCopyStore implements StaleCopyStore {
  readonly #db: Knex;

  constructor(db: Knex) {
    this.#db = db;
  }

  async save(source: LiveSource, normalizedQuery: string, payload: LivePayload, fetchedAt: Date): Promise<void> {
    await this.#db('live_copies')
      .insert({ source, normalized_query: normalizedQuery, payload: JSON.stringify(payload), fetched_at: fetchedAt })
      .onConflict(['source', 'normalized_query'])
      .merge(['payload', 'fetched_at']);
  }

  async find(source: LiveSource, normalizedQuery: string): Promise<StoredCopy | null> {
    const row = (await this.#db('live_copies').where({ source, normalized_query: normalizedQuery }).first('payload', 'fetched_at')) as CopyRow | undefined;
    if (!row) return null;
    // pg returns jsonb parsed; other drivers (PGlite through knex-pglite) may return the text.
    const payload = typeof row.payload === 'string' ? (JSON.parse(row.payload) as LivePayload) : row.payload;
    return { payload, fetchedAt: new Date(row.fetched_at) };
  }
}
