/** Identical concurrent lookups make one upstream call (DECISIONS §2). */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { liveLookup } from './lookup.ts';
import { startFakeArxiv } from '../../test/fakes/arxiv.ts';
import { liveDeps } from '../../test/fakes/live-deps.ts';
import type { FakeUpstream } from '../../test/fakes/upstream.ts';

let upstream: FakeUpstream<'empty'>;
beforeAll(async () => (upstream = await startFakeArxiv()));
afterAll(async () => upstream.close());

describe('coalescing', () => {
  it('20 concurrent identical lookups, spelled differently, make one upstream call and get the same answer', async () => {
    const deps = liveDeps({ baseUrl: upstream.url });
    upstream.requests.length = 0;
    upstream.delayMs = 100;
    const spellings = ['Science', 'science', '  SCIENCE ', 'science'];
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => liveLookup('arxiv', spellings[i % 4]!, 10, deps)));
    upstream.delayMs = 0;
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.requests[0]!.url.searchParams.get('search_query')).toBe('all:science');
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    expect(answers[0]!.results).toHaveLength(10);
  });

  it('different queries or limits are not coalesced, and a finished lookup is not reused', async () => {
    const deps = liveDeps({ baseUrl: upstream.url });
    upstream.requests.length = 0;
    await Promise.all([liveLookup('arxiv', 'science', 10, deps), liveLookup('arxiv', 'physics', 10, deps), liveLookup('arxiv', 'science', 5, deps)]);
    await liveLookup('arxiv', 'science', 10, deps);
    expect(upstream.requests).toHaveLength(4);
    expect(deps.flights.size).toBe(0);
  });
});
