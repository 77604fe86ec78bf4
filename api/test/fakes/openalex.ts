/**
 * OpenAlex fake. No real recorded `/works` answer exists (SOURCES.md), so this one is built in the
 * documented format (meta + results, `abstract_inverted_index`) from public facts about one real
 * work, W2741809807 ("The state of OA", PeerJ 2018, the example work in OpenAlex's own docs). The
 * abstract is its real first sentence; `cited_by_count` is illustrative, not a recorded value.
 */
import { startFake } from './upstream.ts';
import type { FakeUpstream } from './upstream.ts';

export const STATE_OF_OA_ABSTRACT =
  'Despite growing interest in Open Access (OA) to scholarly literature, there is an unmet need for large-scale, up-to-date, and reproducible studies assessing the prevalence and characteristics of OA.';

export function invertedIndex(text: string): Record<string, number[]> {
  const index: Record<string, number[]> = {};
  text.split(' ').forEach((word, position) => (index[word] ??= []).push(position));
  return index;
}

const AUTHORS = ['Heather Piwowar', 'Jason Priem', 'Vincent Larivière', 'Juan Pablo Alperin', 'Lisa Matthias', 'Bree Norlander', 'Ashley Farley', 'Jevin D. West', 'Stefanie Haustein'];

export const WORKS_ANSWER = {
  meta: { count: 1, db_response_time_ms: 21, page: 1, per_page: 25, groups_count: null },
  results: [
    {
      id: 'https://openalex.org/W2741809807',
      doi: 'https://doi.org/10.7717/peerj.4375',
      title: 'The state of OA: a large-scale analysis of the prevalence and impact of Open Access articles',
      display_name: 'The state of OA: a large-scale analysis of the prevalence and impact of Open Access articles',
      publication_year: 2018,
      publication_date: '2018-02-13',
      type: 'article',
      cited_by_count: 1000,
      authorships: AUTHORS.map((display_name, i) => ({ author_position: i === 0 ? 'first' : 'middle', author: { display_name } })),
      abstract_inverted_index: invertedIndex(STATE_OF_OA_ABSTRACT),
    },
  ],
  group_by: [],
};

export function startFakeOpenAlex(): Promise<FakeUpstream> {
  return startFake((url, mode) => {
    if (mode !== 'ok') return undefined;
    if (url.pathname !== '/works') return { status: 404, headers: { 'content-type': 'application/json' }, body: '{"error":"not found"}' };
    return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(WORKS_ANSWER) };
  });
}
