/**
 * No race reaches a client as a 500: identical and overlapping queries in every format
 * (JSON, CSV, Parquet, ranges of both files), sent concurrently and repeatedly by one account. The
 * contract allows only 200/206, or 503 with Retry-After; each query is charged once in its window.
 * Before each scratch file had one owner, concurrent CSV/JSON conversions of one stored result
 * removed each other's scratch Parquet and answered 500.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestApi } from '@uda/test-support/api-harness';
import { ledgerOf, openStack, type Stack } from '@uda/test-support/sql-stack';

let stack: Stack;
beforeAll(async () => {
  stack = await openStack('queryrace');
}, 120_000);
afterAll(() => stack.close());

const SQLS = [
  'SELECT * FROM gutenberg LIMIT 50',
  'SELECT g.title, c.name FROM gutenberg g, census_states c ORDER BY g.text_id, c.name LIMIT 1000',
  'SELECT text_id, title FROM gutenberg ORDER BY text_id LIMIT 20',
  'SELECT name FROM census_states ORDER BY name LIMIT 7',
];

interface Variant {
  readonly label: string;
  send(api: TestApi, key: string, sql: string): Promise<Response>;
}

const file = (format: 'csv' | 'parquet', range?: string): Variant => ({
  label: `${format}${range ? ` ${range}` : ''}`,
  send: (api, key, sql) => api.get(`/api/v1/query.${format}?sql=${encodeURIComponent(sql)}`, { key, headers: range ? { range } : {} }),
});

const VARIANTS: readonly Variant[] = [
  { label: 'json', send: (api, key, sql) => api.get('/api/v1/query', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql }) }) },
  file('csv'),
  file('parquet'),
  file('csv', 'bytes=0-9'),
  file('parquet', 'bytes=-64'),
];

const COPIES = 4;
const ROUNDS = 3;

/** Each round has queries of its own, so each round races a run and then its first conversions. */
const roundSqls = (round: number) => SQLS.map((sql) => `${sql} OFFSET ${round}`);

interface Answer {
  readonly what: string;
  readonly res: Response;
  readonly body: Buffer;
}

/** Every variant of every query, `COPIES` times each, all at once. */
async function burst(api: TestApi, key: string, sqls: readonly string[]): Promise<Answer[]> {
  const sends = sqls.flatMap((sql) => VARIANTS.flatMap((variant) => Array.from({ length: COPIES }, () => ({ sql, variant }))));
  return Promise.all(
    sends.map(async ({ sql, variant }) => {
      const res = await variant.send(api, key, sql);
      return { what: `${variant.label} "${sql}"`, res, body: Buffer.from(await res.arrayBuffer()) };
    }),
  );
}

function unexpectedOf(answers: readonly Answer[]): string[] {
  return answers.flatMap(({ what, res, body }) => {
    const expected = what.includes('bytes=') ? 206 : 200;
    // Told to retry: the query's lock is held (503), or the account already runs its tier's share
    // of queries (429 QUERY_CONCURRENCY_LIMITED, DECISIONS §4): one account sends all of these.
    const retryLater = (res.status === 503 || (res.status === 429 && body.toString('utf8').includes('"QUERY_CONCURRENCY_LIMITED"'))) && Number(res.headers.get('retry-after')) > 0;
    return res.status === expected || retryLater ? [] : [`${what}: ${res.status} ${body.toString('utf8').slice(0, 200)}`];
  });
}

describe('concurrent identical and overlapping SQL requests', () => {
  it(`${ROUNDS} rounds of ${SQLS.length * VARIANTS.length * COPIES} concurrent requests, uncached then stored: only 200/206, or 503 or the account's 429 with Retry-After; one charge per query`, async () => {
    // The burst limit is not under test here: this many requests from one address would cross it.
    const api = await stack.start({ limits: { burst: { points: 10_000, windowS: 900 } } });
    const { accountId, apiKey } = await api.account({ usd: '100' });
    const unexpected: string[] = [];
    let served = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const sqls = roundSqls(round);
      // Uncached: one request runs each query, the others wait for it or are told to retry; then
      // stored: the formats the run did not make are made now, by many requests at once.
      for (const phase of [await burst(api, apiKey, sqls), await burst(api, apiKey, sqls)]) {
        unexpected.push(...unexpectedOf(phase));
        served += phase.filter((a) => a.res.status < 300).length;
      }
    }
    expect(unexpected).toEqual([]);
    // Not all of them were told to retry: results were served and conversions raced.
    expect(served).toBeGreaterThan(0);
    const charges = (await ledgerOf(stack.ctx, accountId)).filter((row) => row.kind === 'charge');
    expect(charges).toHaveLength(SQLS.length * ROUNDS);
    expect(new Set(charges.map((row) => row.idempotency_key)).size).toBe(SQLS.length * ROUNDS);
    await api.close();
  }, 300_000);
});
