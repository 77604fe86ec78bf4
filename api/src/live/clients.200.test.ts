/** Each live client against its fake, answering with the real recorded responses. */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ArxivClient } from './arxiv.ts';
import { OpenAlexClient } from './openalex.ts';
import { StackExchangeClient } from './stackexchange.ts';
import { WikipediaClient } from './wikipedia.ts';
import { startFakeArxiv } from '../../test/fakes/arxiv.ts';
import { STATE_OF_OA_ABSTRACT, startFakeOpenAlex } from '../../test/fakes/openalex.ts';
import { startFakeStackExchange } from '../../test/fakes/stackexchange.ts';
import { startFakeWikipedia } from '../../test/fakes/wikipedia.ts';
import { TEST_USER_AGENT, testHttp } from '../../test/fakes/live-deps.ts';
import type { FakeUpstream } from '../../test/fakes/upstream.ts';

const fakes: FakeUpstream<string>[] = [];
async function fake<T extends FakeUpstream<string>>(start: () => Promise<T>): Promise<T> {
  const started = await start();
  fakes.push(started);
  return started;
}
afterAll(async () => Promise.all(fakes.map((f) => f.close())));

describe('Wikipedia search', () => {
  let upstream: FakeUpstream;
  beforeAll(async () => (upstream = await fake(startFakeWikipedia)));

  it('calls action=query&list=search with the keywords, limit and User-Agent, and returns plain-text records', async () => {
    const client = new WikipediaClient({ baseUrl: upstream.url, restBaseUrl: upstream.url, http: testHttp });
    const { payload } = await client.search('counter strike', 10);
    const request = upstream.requests.at(-1)!;
    expect(request.url.pathname).toBe('/w/api.php');
    expect(Object.fromEntries(request.url.searchParams)).toEqual({ action: 'query', list: 'search', srsearch: 'counter strike', format: 'json', srlimit: '10' });
    expect(request.headers['user-agent']).toBe(TEST_USER_AGENT);
    expect(payload.total).toBe(15009);
    expect(payload.results).toHaveLength(10);
    expect(payload.results[0]).toMatchObject({ pageid: 41730846, title: 'Counter-Strike', url: 'https://en.wikipedia.org/wiki/Counter-Strike' });
    expect((payload.results[0] as { extract: string }).extract).not.toMatch(/<span/);
  });

  it('fetches an article summary by title', async () => {
    const client = new WikipediaClient({ baseUrl: upstream.url, restBaseUrl: upstream.url, http: testHttp });
    const { payload } = await client.article('en', 'Ayrton Senna');
    expect(upstream.requests.at(-1)!.url.pathname).toBe('/api/rest_v1/page/summary/Ayrton_Senna');
    expect(payload.results).toEqual([expect.objectContaining({ title: 'Ayrton Senna', url: 'https://en.wikipedia.org/wiki/Ayrton_Senna' })]);
  });

  it('answers a missing article with no results rather than an error', async () => {
    const client = new WikipediaClient({ baseUrl: upstream.url, restBaseUrl: upstream.url, http: testHttp });
    expect((await client.article('en', 'No such page at all')).payload).toEqual({ results: [], total: 0 });
  });
});

describe('arXiv search', () => {
  let upstream: FakeUpstream<'empty'>;
  beforeAll(async () => (upstream = await fake(startFakeArxiv)));

  it('sends search_query=all:… with start and max_results and parses the Atom entries', async () => {
    const { payload } = await new ArxivClient({ baseUrl: upstream.url, http: testHttp }).search('science', 10);
    const request = upstream.requests.at(-1)!;
    expect(request.url.pathname).toBe('/api/query');
    expect(Object.fromEntries(request.url.searchParams)).toEqual({ search_query: 'all:science', start: '0', max_results: '10' });
    expect(request.headers['user-agent']).toBe(TEST_USER_AGENT);
    expect(payload.total).toBe(120839);
    expect(payload.results).toHaveLength(10);
    expect(payload.results[0]).toEqual(expect.objectContaining({ arxiv_id: expect.any(String), title: expect.any(String), authors: expect.any(Array) }));
  });

  it('returns no results for an empty feed', async () => {
    upstream.mode = 'empty';
    const { payload } = await new ArxivClient({ baseUrl: upstream.url, http: testHttp }).search('zzzz', 10);
    upstream.mode = 'ok';
    expect(payload).toEqual({ results: [], total: 0 });
  });
});

describe('Stack Exchange search', () => {
  it('calls /2.3/search/advanced with q, site, pagesize, order and sort, and decodes the gzip answer', async () => {
    const upstream = await fake(startFakeStackExchange);
    const { payload, backoffSeconds } = await new StackExchangeClient({ baseUrl: upstream.url, http: testHttp }).search('branch prediction', 10);
    const request = upstream.requests.at(-1)!;
    expect(request.url.pathname).toBe('/2.3/search/advanced');
    expect(Object.fromEntries(request.url.searchParams)).toEqual({ q: 'branch prediction', site: 'stackoverflow', pagesize: '10', order: 'desc', sort: 'relevance' });
    expect(request.headers['accept-encoding']).toContain('gzip');
    expect(payload.results).toHaveLength(10);
    expect(payload.results[0]).toMatchObject({ question_id: 11227809, site: 'stackoverflow' });
    expect(backoffSeconds).toBeUndefined();
  });
});

describe('OpenAlex search', () => {
  it('sends search, per-page and the configured api_key, and rebuilds the abstract', async () => {
    const upstream = await fake(startFakeOpenAlex);
    const client = new OpenAlexClient({ baseUrl: upstream.url, apiKey: 'key-123', http: testHttp });
    const { payload } = await client.search('open access prevalence', 5);
    const request = upstream.requests.at(-1)!;
    expect(request.url.pathname).toBe('/works');
    expect(Object.fromEntries(request.url.searchParams)).toEqual({ search: 'open access prevalence', 'per-page': '5', api_key: 'key-123' });
    expect(request.headers['user-agent']).toBe(TEST_USER_AGENT);
    expect(payload.total).toBe(1);
    expect(payload.results[0]).toMatchObject({ id: 'https://openalex.org/W2741809807', publication_year: 2018, abstract: STATE_OF_OA_ABSTRACT });
  });
});
