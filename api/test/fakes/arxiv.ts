/** arXiv fake: the recorded Atom feed for `all:science`, and an empty feed in mode `empty`. */
import { recorded, startFake } from './upstream.ts';
import type { FakeUpstream } from './upstream.ts';

// An empty result is a feed without entries; arXiv sends totalResults 0.
const EMPTY_FEED = `<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title type="html">ArXiv Query: search_query=all:zzzz&amp;id_list=&amp;start=0&amp;max_results=10</title>
  <id>http://arxiv.org/api/empty</id>
  <updated>2019-08-10T00:00:00-04:00</updated>
  <opensearch:totalResults xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">0</opensearch:totalResults>
</feed>`;

export function startFakeArxiv(): Promise<FakeUpstream<'empty'>> {
  return startFake<'empty'>((url, mode) => {
    const atom = { 'content-type': 'application/atom+xml; charset=utf-8' };
    if (url.pathname !== '/api/query') return { status: 404, headers: {}, body: 'not found' };
    if (mode === 'ok') return { status: 200, headers: atom, body: recorded('arxiv-query.xml') };
    if (mode === 'empty') return { status: 200, headers: atom, body: EMPTY_FEED };
    return undefined;
  });
}
