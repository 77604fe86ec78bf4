/** Wikipedia fake: the recorded MediaWiki search and REST summary (../shared/data/SOURCES.md). */
import { recorded, startFake } from './upstream.ts';
import type { FakeAnswer, FakeUpstream } from './upstream.ts';

const json = (body: Buffer | string, status = 200): FakeAnswer => ({ status, headers: { 'content-type': 'application/json; charset=utf-8' }, body });

/** The recording holds 10 hits; like MediaWiki, answer at most `srlimit` of them. */
function search(limit: number): unknown {
  const doc = JSON.parse(recorded('wiki-search.json').toString('utf8')) as { query: { search: unknown[] } };
  return { ...doc, query: { ...doc.query, search: doc.query.search.slice(0, limit) } };
}

export function startFakeWikipedia(): Promise<FakeUpstream> {
  return startFake((url, mode) => {
    if (mode !== 'ok') return undefined;
    if (url.pathname === '/w/api.php') return json(JSON.stringify(search(Number(url.searchParams.get('srlimit') ?? 10))));
    // The recording is the summary of Ayrton_Senna; any other title is a missing page.
    if (url.pathname === '/api/rest_v1/page/summary/Ayrton_Senna') return json(recorded('wiki-summary.json'));
    if (url.pathname.startsWith('/api/rest_v1/page/summary/')) {
      return json(JSON.stringify({ type: 'https://mediawiki.org/wiki/HyperSwitch/errors/not_found', title: 'Not found.', method: 'get' }), 404);
    }
    return json('{}', 404);
  });
}
