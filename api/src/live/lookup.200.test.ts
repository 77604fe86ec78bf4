/** The lookup core's own bounds and its optional fresh cache shared by pods through the copy store. */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MemoryStaleCopyStore } from './copies.ts';
import { liveLookup } from './lookup.ts';
import { startFakeWikipedia } from '../../test/fakes/wikipedia.ts';
import { liveDeps } from '../../test/fakes/live-deps.ts';
import type { FakeUpstream } from '../../test/fakes/upstream.ts';

let upstream: FakeUpstream;
beforeAll(async () => (upstream = await startFakeWikipedia()));
afterAll(async () => upstream.close());

describe('live lookup bounds', () => {
  it('caps the page size it asks the upstream for at 50', async () => {
    await liveLookup('wiki', 'counter strike', 500, liveDeps({ baseUrl: upstream.url }));
    expect(upstream.requests.at(-1)!.url.searchParams.get('srlimit')).toBe('50');
  });

  it('answers blank keywords with no results and no upstream call', async () => {
    upstream.requests.length = 0;
    expect(await liveLookup('wiki', ' \t ', 10, liveDeps({ baseUrl: upstream.url }))).toEqual({ results: [], total: 0 });
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('fresh cache through the copy store', () => {
  it('serves a recent copy saved by another pod without calling the upstream, and refetches once it is old', async () => {
    let now = new Date('2026-03-01T00:00:00Z');
    const copies = new MemoryStaleCopyStore();
    const pod = () => liveDeps({ baseUrl: upstream.url, copies, freshForMs: 60_000, now: () => now });
    upstream.requests.length = 0;
    const first = await liveLookup('wiki', 'counter strike', 5, pod());
    const second = await liveLookup('wiki', 'Counter Strike', 3, pod());
    expect(upstream.requests).toHaveLength(1);
    expect(second).toEqual({ ...first, results: first.results.slice(0, 3) });
    expect(second.stale).toBeUndefined();
    await liveLookup('wiki', 'counter strike', 10, pod());
    expect(upstream.requests).toHaveLength(2);
    now = new Date('2026-03-01T00:02:00Z');
    await liveLookup('wiki', 'counter strike', 3, pod());
    expect(upstream.requests).toHaveLength(3);
  });
});
