/**
 * Redis round trips per request, counted by a TCP proxy in front of Redis: a round trip is one
 * batch the API wrote to Redis before awaiting replies (one `data` chunk from the API's side of the
 * connection). The billing timers are stopped, so nothing but the request talks to Redis while it
 * is counted; a charged lookup's release then rides on the next request's call (DECISIONS §3 "Holds").
 * `DEBUG_TRIPS=1` prints each request's batches, one command a line (the proxy's `log`).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import type { TestApi } from '@uda/test-support/api-harness';
import { TEST_REDIS_URL } from '@uda/test-support/api-harness';
import { type CountingRedisProxy, countingRedisProxy } from '@uda/test-support/redis-proxy';
import { useStoredStack } from '../../test/support/stacks.ts';

const stack = useStoredStack();

let proxy: CountingRedisProxy;
let api: TestApi;
beforeAll(async () => {
  proxy = await countingRedisProxy(TEST_REDIS_URL);
  api = await stack.ctx.start({ config: { REDIS_URL: proxy.url, QUERY_RUNNER_URLS: stack.runner.url }, useOwnRedis: true });
  api.services.billingLoops.stop();
}, 60_000);
afterAll(async () => {
  await api?.close();
  await proxy?.close();
});

/**
 * The batches written to Redis, and the statements the API's PostgreSQL client sent (knex's
 * `query` event, the real pool's), from sending the request until its response ended and its
 * close handlers ran.
 */
async function roundTrips(path: string, key?: string, method = 'GET', body?: string): Promise<{ trips: number; statements: string[]; res: Response }> {
  const before = proxy.batches;
  const statements: string[] = [];
  const count = (query: { sql: string }) => statements.push(query.sql);
  stack.ctx.db.on('query', count);
  try {
    const headers = body ? { 'content-type': 'application/json' } : undefined;
    const res = await api.get(path, { key, method, body, headers });
    await res.arrayBuffer();
    // The response's close handlers (a delivery's end) run a few loop turns after the body went out.
    await new Promise((resolve) => setTimeout(resolve, 100));
    if (process.env.DEBUG_TRIPS) console.log(path, method, proxy.log.slice(before).join('\n---\n'));
    return { trips: proxy.batches - before, statements, res };
  } finally {
    stack.ctx.db.off('query', count);
  }
}

/** Whether `condition` holds within `boundMs`, asked every 50 ms. */
async function until(condition: () => Promise<boolean>, boundMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + boundMs;
  while (Date.now() < deadline) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

/** A charged `POST /api/v1/query`. */
function postQuery(sql: string, key: string): ReturnType<typeof roundTrips> {
  return roundTrips('/api/v1/query', key, 'POST', JSON.stringify({ sql }));
}

describe('Redis round trips per request', () => {
  it('an anonymous lookup takes one', async () => {
    await roundTrips('/books/war');
    const { trips, res } = await roundTrips('/books/war');
    expect(res.status).toBe(200);
    expect(trips).toBe(1);
  });

  it('an authenticated request that is not charged (a HEAD lookup) takes one', async () => {
    const { apiKey } = await api.account({ usd: '5' });
    await roundTrips('/books/war', apiKey, 'HEAD');
    const { trips, res } = await roundTrips('/books/war', apiKey, 'HEAD');
    expect(res.status).toBe(200);
    expect(trips).toBe(1);
  });

  it('a charged lookup takes one, and its X-Credits-Remaining is the balance after its true charge', async () => {
    const { apiKey, accountId } = await api.account({ usd: '5' });
    // The first lookups take the key from PostgreSQL and the account's credit lease: not the steady state.
    for (let i = 0; i < 3; i++) await roundTrips('/books/war?limit=3', apiKey);
    const trips: number[] = [];
    let remaining = 0;
    let cost = 0;
    for (let i = 0; i < 5; i++) {
      const { trips: n, res } = await roundTrips('/books/war?limit=3', apiKey);
      expect(res.status).toBe(200);
      trips.push(n);
      remaining = Number(res.headers.get('x-credits-remaining'));
      cost = Number(res.headers.get('x-credit-cost'));
    }
    expect(cost).toBeGreaterThan(0);
    expect(trips).toEqual([1, 1, 1, 1, 1]);
    // The last lookup's release rides on the next call: send it, then every readout agrees with the header.
    await api.services.billing.flush();
    expect((await api.services.billing.balance(accountId)) / 1e6).toBe(remaining);
  });

  it('a readout right after a charged lookup, before any flush, says the balance after that lookup', async () => {
    const { apiKey } = await api.account({ usd: '5' });
    // The first lookups take the credit lease; the next one holds, and its release waits in the queue.
    for (let i = 0; i < 3; i++) await roundTrips('/books/war?limit=3', apiKey);
    const { res } = await roundTrips('/books/war?limit=3', apiKey);
    expect(res.status).toBe(200);
    expect(Number(res.headers.get('x-credit-cost'))).toBeGreaterThan(0);
    // The lookup's release waits in this pod's queue (the timers are stopped): the readout must count it anyway.
    const usage = await api.get('/api/v1/auth/usage', { key: apiKey });
    expect(usage.headers.get('x-credits-remaining')).toBe(res.headers.get('x-credits-remaining'));
  });

  describe('a charged SQL request (POST /api/v1/query)', () => {
    it('runs no PostgreSQL statement, a new run or a paid re-read, and takes a fixed number of round trips', async () => {
      const { apiKey } = await api.account({ usd: '5' });
      // The first request takes the key from PostgreSQL and the account's credit lease: not the steady state.
      await postQuery('SELECT title FROM gutenberg ORDER BY title LIMIT 1', apiKey);
      const run = await postQuery('SELECT title FROM gutenberg ORDER BY title LIMIT 2', apiKey);
      expect(run.res.status).toBe(200);
      expect(run.res.headers.get('x-credit-cost')).toBe('0.01');
      expect(run.statements).toEqual([]);
      const reread = await postQuery('SELECT title FROM gutenberg ORDER BY title LIMIT 2', apiKey);
      expect(reread.res.status).toBe(200);
      expect(reread.res.headers.get('x-credit-cost')).toBe('0');
      expect(reread.res.headers.get('x-service-cached')).toBe('true');
      expect(reread.statements).toEqual([]);
      // A new run (not yet the 2 of DECISIONS §3): the burst counters with the re-read marker (one
      // script); the daily cap with the fair share's start (its budgets' check and its token, one
      // script) in one write; the delivery's begin with the spend (which sets the marker) in one
      // write, the fair share's end leaving with them; the delivery's end. A paid re-read: the burst
      // counters, the marker, the delivery's begin on the charge it names and the balance it reports
      // in one script; its end leaves with the pod's next write.
      expect({ run: run.trips, reread: reread.trips }).toEqual({ run: 4, reread: 1 });
      // The re-read's end took no round trip of its own, but it does reach Redis (with the pod's next
      // write, or by itself at most 250 ms later): then no delivery of the account is left in flight.
      const open = `${api.services.config.REDIS_KEY_PREFIX}dlv-open`;
      // Read on a client of its own, past the proxy: nothing the API sends is held or counted by it.
      const redis = new Redis(TEST_REDIS_URL);
      try {
        expect(await until(async () => (await redis.zcard(open)) === 0)).toBe(true);
      } finally {
        redis.disconnect();
      }
    });
  });
});
