/**
 * Stored copies and the stale fallback (SPEC "Stale results") with the knex store on the real
 * PostgreSQL, in a fresh database for this file.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import knexModule from 'knex';
import type { Knex } from 'knex';
import { KnexStaleCopyStore } from './copies.ts';
import { liveLookup, wikiArticleLookup } from './lookup.ts';
import { down, up } from '@uda/shared/db/live-copies';
import { startFakeWikipedia } from '../../test/fakes/wikipedia.ts';
import { expectUpstreamError, liveDeps } from '../../test/fakes/live-deps.ts';
import type { FakeUpstream } from '../../test/fakes/upstream.ts';

const adminUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const database = `uda_live_${randomBytes(6).toString('hex')}`;
let admin: Knex;
let db: Knex;
let upstream: FakeUpstream;

beforeAll(async () => {
  admin = knexModule.knex({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
  await admin.raw(`CREATE DATABASE ${database}`);
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  db = knexModule.knex({ client: 'pg', connection: url.toString(), pool: { min: 0, max: 4 } });
  await up(db);
  upstream = await startFakeWikipedia();
});

afterAll(async () => {
  await upstream?.close();
  await db?.destroy();
  await admin.raw(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.destroy();
});

const fetchedAt = new Date('2026-03-01T12:00:00.000Z');

describe('stale fallback with stored copies in PostgreSQL', () => {
  it('stores every success under the normalized query, replacing the older copy', async () => {
    const deps = liveDeps({ baseUrl: upstream.url, copies: new KnexStaleCopyStore(db), now: () => fetchedAt });
    upstream.mode = 'ok';
    await liveLookup('wiki', 'Counter  Strike', 10, deps);
    await liveLookup('wiki', 'counter strike', 10, deps);
    const rows = await db('live_copies').select('source', 'normalized_query', 'fetched_at');
    expect(rows).toEqual([{ source: 'wiki', normalized_query: 'counter strike', fetched_at: fetchedAt }]);
  });

  it('answers from the stored copy with data.stale and cached_at when the upstream is down', async () => {
    const deps = liveDeps({ baseUrl: upstream.url, copies: new KnexStaleCopyStore(db), now: () => fetchedAt });
    upstream.mode = 'unavailable';
    const data = await liveLookup('wiki', 'COUNTER strike', 3, deps);
    expect(data.stale).toEqual({ message: expect.stringContaining('stored copy'), cached_at: '2026-03-01T12:00:00.000Z' });
    expect(data.results).toHaveLength(3);
    expect(data.results[0]).toMatchObject({ title: 'Counter-Strike' });
    expect(data.total).toBe(15009);
  });

  it('falls back for every upstream failure kind, rate limiting included', async () => {
    for (const mode of ['rate-limited-retry-after', 'forbidden', 'html', 'hang'] as const) {
      // Fresh dependencies each time: a Retry-After would otherwise hold back the next mode's call.
      const deps = liveDeps({ baseUrl: upstream.url, copies: new KnexStaleCopyStore(db) });
      upstream.mode = mode;
      upstream.requests.length = 0;
      expect((await liveLookup('wiki', 'counter strike', 10, deps)).stale?.cached_at).toBe('2026-03-01T12:00:00.000Z');
      expect(upstream.requests).toHaveLength(1);
    }
  });

  it('returns the upstream error when no copy matches', async () => {
    const copies = new KnexStaleCopyStore(db);
    upstream.mode = 'rate-limited-retry-after';
    await expectUpstreamError(liveLookup('wiki', 'never looked up', 10, liveDeps({ baseUrl: upstream.url, copies })), 'UPSTREAM_RATE_LIMITED', 7);
    upstream.mode = 'server-error';
    await expectUpstreamError(liveLookup('wiki', 'never looked up', 10, liveDeps({ baseUrl: upstream.url, copies })), 'UPSTREAM_UNAVAILABLE', 'absent');
  });

  it('honours a Retry-After: the next lookup is refused without calling the upstream', async () => {
    const deps = liveDeps({ baseUrl: upstream.url, copies: new KnexStaleCopyStore(db) });
    upstream.mode = 'rate-limited-retry-after';
    upstream.requests.length = 0;
    await expectUpstreamError(liveLookup('wiki', 'first', 10, deps), 'UPSTREAM_RATE_LIMITED', 7);
    upstream.mode = 'ok';
    await expectUpstreamError(liveLookup('wiki', 'second', 10, deps), 'UPSTREAM_RATE_LIMITED', 7);
    expect(upstream.requests).toHaveLength(1);
  });

  it('keeps article lookups apart from keyword lookups and falls back for them too', async () => {
    const deps = liveDeps({ baseUrl: upstream.url, copies: new KnexStaleCopyStore(db), now: () => fetchedAt });
    upstream.mode = 'ok';
    const fresh = await wikiArticleLookup({ lang: 'en', title: 'Ayrton Senna' }, deps);
    expect(fresh.stale).toBeUndefined();
    upstream.mode = 'reset';
    const copy = await wikiArticleLookup({ lang: 'en', title: 'Ayrton Senna' }, deps);
    expect(copy).toEqual({ ...fresh, stale: expect.objectContaining({ cached_at: fetchedAt.toISOString() }) });
    await expectUpstreamError(liveLookup('wiki', 'ayrton senna', 10, deps), 'UPSTREAM_UNAVAILABLE');
  });

  it('the migration goes down and up again', async () => {
    await down(db);
    expect(await db.schema.hasTable('live_copies')).toBe(false);
    await up(db);
    expect(await db.schema.hasTable('live_copies')).toBe(true);
  });
});
