/**
 * The five stored sources end to end: the API, a real query-runner child process and a database the
 * real exporter CLI built from the sample data. A hit (ranked first), a miss (404, not billed), the
 * runner being unreachable (SOURCE_UNAVAILABLE, 503 with Retry-After: DECISIONS §4 Fair shares) or
 * failing (INTERNAL_ERROR).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import type { TestApi } from '@uda/test-support/api-harness';
import { lookupEnvelope } from './schema.ts';
import { useStoredStack } from '../../test/support/stacks.ts';
import { freePort } from '../../test/support/spawn.ts';

const stack = useStoredStack();

const start = (runnerUrl = stack.runner.url) => stack.ctx.start({ config: { QUERY_RUNNER_URLS: runnerUrl } });

interface Envelope {
  status: string;
  account_state: string;
  data: { source: string; query: string; results: Record<string, unknown>[]; total: number; error?: string; code?: string };
}

async function lookup(api: TestApi, path: string, key?: string): Promise<{ res: Response; body: Envelope }> {
  const res = await api.get(path, { key });
  return { res, body: (await res.json()) as Envelope };
}

describe('stored lookups: a hit, ranked, billed per row at the open rate', () => {
  const hits = [
    { path: '/books/the%20art%20of%20war', source: 'gutenberg', first: { text_id: 132, title: 'The Art of War' } },
    { path: '/population/york', source: 'census', first: { level: 'county', name: 'York County, Pennsylvania' } },
    { path: '/fdc/butter', source: 'food', first: { description: 'Butter, salted' } },
    { path: '/paperswithcode/attention', source: 'pwc', first: { arxiv_id: '1706.03762', title: 'Attention Is All You Need' } },
    { path: '/edgar/TSLA', source: 'sec', first: { ticker: 'TSLA', cik: 1318605 } },
  ];
  for (const hit of hits) {
    it(`${hit.source}: the best match first, data.total, X-Credit-Cost per row`, async () => {
      const api = await start();
      const { apiKey } = await api.account();
      const { res, body } = await lookup(api, `${hit.path}?limit=5`, apiKey);
      expect(res.status).toBe(200);
      expect(() => lookupEnvelope.parse(body)).not.toThrow();
      expect(body).toMatchObject({ status: 'success', account_state: 'authenticated', data: { source: hit.source } });
      expect(body.data.results[0]).toMatchObject(hit.first);
      expect(body.data.results.length).toBeLessThanOrEqual(5);
      expect(body.data.total).toBeGreaterThanOrEqual(body.data.results.length);
      expect(res.headers.get('x-credit-cost')).toBe(String((body.data.results.length * 5_000) / 1e6));
      await api.close();
    });
  }

  it('pages with ?limit= up to 50 and reports every match in data.total', async () => {
    const api = await start();
    const { res, body } = await lookup(api, '/sec/bank?limit=50');
    expect(res.status).toBe(200);
    expect(body.data.results).toHaveLength(50);
    expect(body.data.total).toBeGreaterThan(50);
    expect(body.account_state).toBe('anonymous');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('49');
    await api.close();
  });
});

describe('stored lookups: misses and failures', () => {
  for (const source of ['gutenberg', 'census', 'food', 'pwc', 'sec']) {
    it(`${source}: 404 "No results found" with the decoded keywords, not billed`, async () => {
      const api = await start();
      const { apiKey, accountId } = await api.account();
      const { res, body } = await lookup(api, `/${source.toUpperCase()}/zqxj%20nowhere`, apiKey);
      expect(res.status).toBe(404);
      expect(body).toEqual({ status: 'error', account_state: 'authenticated', data: { error: `No results found for "zqxj nowhere" in ${source}` } });
      // A lease take (credit moved into this pod's wallet, balance unchanged) may be written; no charge may.
      expect(await stack.ctx.db('ledger').where({ account_id: accountId, kind: 'charge' })).toHaveLength(0);
      await api.close();
    });
  }

  it('503 SOURCE_UNAVAILABLE with Retry-After in the envelope when no runner can be reached', async () => {
    const api = await start(`http://127.0.0.1:${await freePort()}`);
    const { res, body } = await lookup(api, '/books/war');
    expect(res.status).toBe(503);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(body).toEqual({ status: 'error', account_state: 'anonymous', data: { error: expect.stringContaining('No credit was used'), code: 'SOURCE_UNAVAILABLE' } });
    await api.close();
  });

  it('500 INTERNAL_ERROR without the internal text when the runner fails', async () => {
    // A stand-in runner that fails every lookup the way the real one reports an engine fault.
    const failing: Server = createServer((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 'INTERNAL', message: 'secret engine detail' }));
    });
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
    const api = await start(`http://127.0.0.1:${(failing.address() as AddressInfo).port}`);
    const { res, body } = await lookup(api, '/books/war');
    failing.close();
    expect(res.status).toBe(500);
    expect(body).toEqual({ status: 'error', account_state: 'anonymous', data: { error: expect.any(String), code: 'INTERNAL_ERROR' } });
    expect(JSON.stringify(body)).not.toContain('secret');
    await api.close();
  });
});
