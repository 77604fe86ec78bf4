/**
 * Every upstream failure mode maps to the exact code of SPEC "Data source codes", with Retry-After
 * only when the source said how long (DECISIONS §2 "Upstream signals and their mapping").
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { UpstreamCode } from './errors.ts';
import type { LiveClient } from './types.ts';
import { ArxivClient } from './arxiv.ts';
import { OpenAlexClient } from './openalex.ts';
import { PypiClient } from './pypi.ts';
import { StackExchangeClient } from './stackexchange.ts';
import { WikipediaClient } from './wikipedia.ts';
import { startFakeArxiv } from '../../test/fakes/arxiv.ts';
import { startFakeOpenAlex } from '../../test/fakes/openalex.ts';
import { startFakePypi } from '../../test/fakes/pypi.ts';
import { startFakeStackExchange } from '../../test/fakes/stackexchange.ts';
import { startFakeWikipedia } from '../../test/fakes/wikipedia.ts';
import { expectUpstreamError, testHttp } from '../../test/fakes/live-deps.ts';
import type { CommonMode, FakeUpstream } from '../../test/fakes/upstream.ts';

const CASES: [CommonMode, UpstreamCode, number | 'absent' | 'date'][] = [
  ['rate-limited', 'UPSTREAM_RATE_LIMITED', 'absent'],
  ['rate-limited-retry-after', 'UPSTREAM_RATE_LIMITED', 7],
  ['rate-limited-retry-date', 'UPSTREAM_RATE_LIMITED', 'date'],
  ['forbidden', 'UPSTREAM_FORBIDDEN', 'absent'],
  ['unauthorized', 'UPSTREAM_FORBIDDEN', 'absent'],
  ['server-error', 'UPSTREAM_UNAVAILABLE', 'absent'],
  ['unavailable', 'UPSTREAM_UNAVAILABLE', 'absent'],
  ['hang', 'UPSTREAM_UNAVAILABLE', 'absent'],
  ['reset', 'UPSTREAM_UNAVAILABLE', 'absent'],
  ['html', 'UPSTREAM_BAD_RESPONSE', 'absent'],
  ['truncated', 'UPSTREAM_BAD_RESPONSE', 'absent'],
  ['oversized', 'UPSTREAM_BAD_RESPONSE', 'absent'],
];

const SOURCES: [string, () => Promise<FakeUpstream<string>>, (url: string) => LiveClient][] = [
  ['wiki', startFakeWikipedia, (url) => new WikipediaClient({ baseUrl: url, restBaseUrl: url, http: testHttp })],
  ['arxiv', startFakeArxiv, (url) => new ArxivClient({ baseUrl: url, http: testHttp })],
  ['stackexchange', startFakeStackExchange, (url) => new StackExchangeClient({ baseUrl: url, http: testHttp })],
  ['pypi', startFakePypi, (url) => new PypiClient({ baseUrl: url, http: testHttp })],
  ['openalex', startFakeOpenAlex, (url) => new OpenAlexClient({ baseUrl: url, apiKey: 'k', http: testHttp })],
];

describe.each(SOURCES)('%s client failures', (_source, start, makeClient) => {
  let upstream: FakeUpstream<string>;
  beforeAll(async () => (upstream = await start()));
  afterAll(async () => upstream.close());

  it.each(CASES)('%s gives %s (Retry-After: %s)', async (mode, code, retryAfter) => {
    upstream.mode = mode;
    const error = await expectUpstreamError(makeClient(upstream.url).search('six', 10), code, retryAfter === 'date' ? undefined : retryAfter);
    // An HTTP-date Retry-After 30 s ahead becomes a delay in seconds.
    if (retryAfter === 'date') expect(error.retryAfterSeconds).toBeGreaterThanOrEqual(28);
    if (retryAfter === 'date') expect(error.retryAfterSeconds).toBeLessThanOrEqual(30);
  });
});

describe('OpenAlex without an API key', () => {
  it('is refused as UPSTREAM_FORBIDDEN without calling the upstream', async () => {
    const upstream = await startFakeOpenAlex();
    await expectUpstreamError(new OpenAlexClient({ baseUrl: upstream.url, apiKey: undefined, http: testHttp }).search('x', 1), 'UPSTREAM_FORBIDDEN', 'absent');
    await upstream.close();
    expect(upstream.requests).toHaveLength(0);
  });
});
