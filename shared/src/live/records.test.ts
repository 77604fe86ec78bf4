/** The normalisers against the real recorded upstream answers (../shared/data/SOURCES.md). */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import {
  UpstreamFormatError,
  abstractFromInvertedIndex,
  arxivRecords,
  plainText,
  pypiRecord,
  stackExchangeRecords,
  wikiSearchRecords,
  wikiSummaryRecord,
} from './records.ts';

const recorded = (file: string) => readFileSync(new URL(`../../../exporter/data/live/${file}`, import.meta.url), 'utf8');
const json = (file: string): unknown => JSON.parse(recorded(file));

describe('normalisers on recorded answers', () => {
  it('MediaWiki search gives plain-text snippets and article URLs', () => {
    const records = wikiSearchRecords(json('wiki-search.json'));
    expect(records).toHaveLength(10);
    expect(records[0]).toMatchObject({ pageid: 41730846, title: 'Counter-Strike', url: 'https://en.wikipedia.org/wiki/Counter-Strike', description: null });
    expect(records.every((r) => !/<|&quot;/.test(r.extract ?? ''))).toBe(true);
  });

  it('the REST summary keeps the description and the canonical URL', () => {
    expect(wikiSummaryRecord(json('wiki-summary.json'))).toMatchObject({ title: 'Ayrton Senna', url: 'https://en.wikipedia.org/wiki/Ayrton_Senna', description: expect.any(String) });
  });

  it('the arXiv feed gives ids without versions, authors and categories', () => {
    const records = arxivRecords(recorded('arxiv-query.xml'));
    expect(records).toHaveLength(10);
    for (const r of records) {
      expect(r.arxiv_id).not.toMatch(/v\d+$/);
      expect(r.authors.length).toBeGreaterThan(0);
      expect(r.url).toMatch(/^http/);
    }
  });

  it('Stack Exchange questions get ISO dates and unescaped titles', () => {
    const records = stackExchangeRecords(json('stackexchange-questions.json'), 'stackoverflow');
    expect(records).toHaveLength(10);
    expect(records[0]!.created_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(records.every((r) => !r.title.includes('&#39;') && !r.title.includes('&quot;'))).toBe(true);
  });

  it('a PyPI project turns empty strings into null', () => {
    expect(pypiRecord(json('pypi-project.json'))).toMatchObject({ name: 'six', version: '1.16.0', package_url: 'https://pypi.org/project/six/' });
  });
});

describe('format errors', () => {
  it.each([
    ['MediaWiki', () => wikiSearchRecords({ error: { code: 'x' } })],
    ['summary', () => wikiSummaryRecord({})],
    ['arXiv HTML', () => arxivRecords('<!DOCTYPE html><html><body>oops</body></html>')],
    ['arXiv truncated', () => arxivRecords(recorded('arxiv-query.xml').slice(0, 500))],
    ['Stack Exchange', () => stackExchangeRecords({ items: [{}] }, 'stackoverflow')],
  ])('%s throws UpstreamFormatError', (_what, parse) => {
    expect(parse).toThrow(UpstreamFormatError);
  });
});

describe('helpers', () => {
  it('rebuilds an abstract from its inverted index', () => {
    expect(abstractFromInvertedIndex({ world: [1], Hello: [0], again: [3], 'hello,': [2] })).toBe('Hello world hello, again');
    expect(abstractFromInvertedIndex(null)).toBeNull();
  });

  it('strips markup and decodes entities', () => {
    expect(plainText('<span class="x">a</span> &amp; b &#39;c&#x27; &quot;d&quot;')).toBe(`a & b 'c' "d"`);
  });
});
