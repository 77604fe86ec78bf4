/**
 * The five live sources end to end through the REST route: recorded upstream answers from loopback
 * fakes, billing per row, every upstream failure mode with its status, `data.code` and Retry-After,
 * the stale fallback and the coalescing of identical lookups (SPEC "Errors"; DECISIONS §2, §3).
 */
import { describe, expect, it } from '@jest/globals';
import type { CommonMode } from '../../test/fakes/upstream.ts';
import type { TestApi } from '@uda/test-support/api-harness';
import { lookupEnvelope } from './schema.ts';
import { useLiveStack } from '../../test/support/stacks.ts';

const stack = useLiveStack();

interface Envelope {
  status: string;
  account_state: string;
  data: { source: string; query: string; results: Record<string, unknown>[]; total: number | null; stale?: { message: string; cached_at: string | null }; error?: string; code?: string };
}

const start = () => stack.ctx.start({ config: stack.fakes.config });

async function lookup(api: TestApi, path: string, key?: string): Promise<{ res: Response; body: Envelope }> {
  const res = await api.get(path, { key });
  return { res, body: (await res.json()) as Envelope };
}

/** Free tier: open sources 0.005 USD a row, the encyclopedia 0.025. */
const cost = (rows: number, perRowMicro: number) => String((rows * perRowMicro) / 1e6);

describe('live lookups: 200 with the recorded data, billed per row', () => {
  const cases = [
    { path: '/wikipedia/counter%20strike', source: 'wiki', perRow: 25_000, first: { title: 'Counter-Strike' } },
    { path: '/preprints/electron', source: 'arxiv', perRow: 5_000, first: {} },
    { path: '/so/python%20list', source: 'stackexchange', perRow: 5_000, first: {} },
    { path: '/python/six', source: 'pypi', perRow: 5_000, first: { name: 'six' } },
    { path: '/works/state%20of%20oa', source: 'openalex', perRow: 5_000, first: { publication_year: 2018 } },
  ];
  for (const c of cases) {
    it(`${c.source}: the envelope with data.results, X-Credit-Cost for every row and the balance`, async () => {
      const api = await start();
      const { apiKey, accountId } = await api.account();
      const { res, body } = await lookup(api, c.path, apiKey);
      expect(res.status).toBe(200);
      expect(() => lookupEnvelope.parse(body)).not.toThrow();
      expect(body).toMatchObject({ status: 'success', account_state: 'authenticated', data: { source: c.source } });
      expect(body.data.results.length).toBeGreaterThan(0);
      expect(body.data.results[0]).toMatchObject(c.first);
      expect(body.data.stale).toBeUndefined();
      expect(res.headers.get('x-credit-cost')).toBe(cost(body.data.results.length, c.perRow));
      expect(await api.services.billing.balance(accountId)).toBe(5_000_000 - body.data.results.length * c.perRow);
      expect(res.headers.get('x-credits-remaining')).toBe(String((5_000_000 - body.data.results.length * c.perRow) / 1e6));
      await api.close();
    });
  }

  it('wiki article by URL: one row at the encyclopedia rate; a missing article is a 404', async () => {
    const api = await start();
    const { apiKey } = await api.account({ tier: 'pro' });
    const { res, body } = await lookup(api, '/https:/en.wikipedia.org/wiki/Ayrton_Senna', apiKey);
    expect(res.status).toBe(200);
    expect(body.data.results).toHaveLength(1);
    expect(body.data.results[0]).toMatchObject({ title: 'Ayrton Senna' });
    expect(res.headers.get('x-credit-cost')).toBe('0.0125');
    const missing = await lookup(api, '/https://en.wikipedia.org/wiki/No_Such_Article_Here', apiKey);
    expect(missing.res.status).toBe(404);
    expect(missing.body).toEqual({ status: 'error', account_state: 'authenticated', data: { error: 'No results found for "No Such Article Here" in wiki' } });
    await api.close();
  });

  it('404 with the decoded keywords and canonical id when the source finds nothing, not billed', async () => {
    const api = await start();
    const { apiKey, accountId } = await api.account();
    stack.fakes.arxiv.mode = 'empty';
    const { res, body } = await lookup(api, '/preprints/Nothing%20Here', apiKey);
    stack.fakes.arxiv.mode = 'ok';
    expect(res.status).toBe(404);
    expect(body).toEqual({ status: 'error', account_state: 'authenticated', data: { error: 'No results found for "Nothing Here" in arxiv' } });
    // A lease take (credit moved into this pod's wallet, balance unchanged) may be written; no charge may.
    expect(await stack.ctx.db('ledger').where({ account_id: accountId, kind: 'charge' })).toHaveLength(0);
    await api.close();
  });
});

describe('live lookups: upstream failures in the envelope, never billed', () => {
  const modes: { mode: CommonMode; status: number; code: string; retryAfter: string | null }[] = [
    { mode: 'rate-limited', status: 503, code: 'UPSTREAM_RATE_LIMITED', retryAfter: null },
    { mode: 'rate-limited-retry-after', status: 503, code: 'UPSTREAM_RATE_LIMITED', retryAfter: '7' },
    { mode: 'unavailable', status: 503, code: 'UPSTREAM_UNAVAILABLE', retryAfter: null },
    { mode: 'server-error', status: 503, code: 'UPSTREAM_UNAVAILABLE', retryAfter: null },
    { mode: 'hang', status: 503, code: 'UPSTREAM_UNAVAILABLE', retryAfter: null },
    { mode: 'reset', status: 503, code: 'UPSTREAM_UNAVAILABLE', retryAfter: null },
    { mode: 'forbidden', status: 502, code: 'UPSTREAM_FORBIDDEN', retryAfter: null },
    { mode: 'unauthorized', status: 502, code: 'UPSTREAM_FORBIDDEN', retryAfter: null },
    { mode: 'html', status: 502, code: 'UPSTREAM_BAD_RESPONSE', retryAfter: null },
    { mode: 'truncated', status: 502, code: 'UPSTREAM_BAD_RESPONSE', retryAfter: null },
  ];
  for (const m of modes) {
    it(`${m.mode} → ${m.status} ${m.code}, Retry-After ${m.retryAfter ?? 'absent'}`, async () => {
      const api = await start();
      const { apiKey, accountId } = await api.account();
      stack.fakes.wiki.mode = m.mode;
      // Keywords never looked up before, so no stored copy can answer instead.
      const { res, body } = await lookup(api, `/wiki/failure%20${m.mode}`, apiKey);
      stack.fakes.wiki.mode = 'ok';
      expect(res.status).toBe(m.status);
      expect(body).toEqual({ status: 'error', account_state: 'authenticated', data: { error: expect.stringContaining('No credit was used'), code: m.code } });
      expect(res.headers.get('retry-after')).toBe(m.retryAfter);
      // A lease take (credit moved into this pod's wallet, balance unchanged) may be written; no charge may.
      expect(await stack.ctx.db('ledger').where({ account_id: accountId, kind: 'charge' })).toHaveLength(0);
      await api.close();
    });
  }

  it("Stack Exchange's 400 throttle_violation → 503 UPSTREAM_RATE_LIMITED with the wait it states", async () => {
    const api = await start();
    stack.fakes.stackexchange.mode = 'throttle';
    const { res, body } = await lookup(api, '/stackexchange/throttled%20query');
    stack.fakes.stackexchange.mode = 'ok';
    expect(res.status).toBe(503);
    expect(body.data.code).toBe('UPSTREAM_RATE_LIMITED');
    expect(res.headers.get('retry-after')).toBe('42');
    await api.close();
  });

  it("arXiv's 503 → 503 UPSTREAM_UNAVAILABLE", async () => {
    const api = await start();
    stack.fakes.arxiv.mode = 'unavailable';
    const { res, body } = await lookup(api, '/arxiv/down%20query');
    stack.fakes.arxiv.mode = 'ok';
    expect(res.status).toBe(503);
    expect(body.data.code).toBe('UPSTREAM_UNAVAILABLE');
    await api.close();
  });
});

describe('live lookups: stale fallback and coalescing', () => {
  it('answers 200 from the stored copy with data.stale when the upstream is down, billed normally', async () => {
    const api = await start();
    const { apiKey } = await api.account();
    const fresh = await lookup(api, '/wiki/stale%20fallback?limit=3', apiKey);
    expect(fresh.res.status).toBe(200);
    stack.fakes.wiki.mode = 'unavailable';
    const stale = await lookup(api, '/wiki/Stale%20Fallback?limit=3', apiKey);
    stack.fakes.wiki.mode = 'ok';
    expect(stale.res.status).toBe(200);
    expect(stale.body.data.results).toEqual(fresh.body.data.results);
    expect(stale.body.data.stale).toEqual({ message: expect.stringContaining('stored copy'), cached_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    expect(stale.res.headers.get('x-credit-cost')).toBe('0.075');
    await api.close();
  });

  it('makes one upstream call for 20 concurrent identical lookups', async () => {
    const api = await start();
    const { apiKey } = await api.account({ tier: 'developer' });
    stack.fakes.pypi.delayMs = 200;
    const before = stack.fakes.pypi.requests.filter((r) => r.url.pathname === '/pypi/six/json').length;
    const answers = await Promise.all(Array.from({ length: 20 }, () => api.get('/pypi/six', { key: apiKey })));
    stack.fakes.pypi.delayMs = 0;
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(stack.fakes.pypi.requests.filter((r) => r.url.pathname === '/pypi/six/json').length - before).toBe(1);
    // Each caller still pays for its own answer.
    expect(new Set(answers.map((a) => a.headers.get('x-credit-cost')))).toEqual(new Set([answers[0]!.headers.get('x-credit-cost')]));
    await api.close();
  });
});
