/**
 * Stored-source lookups through the runner's HTTP API, on a database the real exporter built from
 * the sample data.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { LookupResponse } from '@uda/shared/runner-contract';
import { startExportedRunner, type ExportedRunner } from '../../test/exported-runner.ts';
import { postQuery } from '@uda/test-support/runner-harness';

let served: ExportedRunner;

const lookup = (body: unknown) => served.lookup(body);

/** A lookup that must answer 200, parsed with the contract's schema. */
const ok = (source: string, keywords: string, limit = 10): Promise<LookupResponse> => served.ok(source, keywords, limit);

beforeAll(async () => {
  served = await startExportedRunner('lookups');
});

afterAll(async () => {
  await served.stop();
});

describe('POST /v1/lookups', () => {
  it('gutenberg: every word must match, titles first, with the book URL', async () => {
    const { results, total } = await ok('gutenberg', 'declaration independence');
    expect(total).toBeGreaterThanOrEqual(2);
    // Both editions have the words in their titles; BM25 puts the shorter title (#300) first.
    expect(results.slice(0, 2).map((r) => r.text_id)).toEqual([300, 1]);
    expect(results[1]).toMatchObject({ text_id: 1, title: 'The Declaration of Independence of the United States of America', url: 'https://www.gutenberg.org/ebooks/1' });
    expect(results[1]!.authors).toEqual([{ name: 'Jefferson, Thomas', dates: '1743-1826', role: 'Author' }]);
  });

  it('gutenberg: a title with a word the SQL validator forbids is still found', async () => {
    const { results } = await ok('gutenberg', 'copy');
    expect(results.length).toBeGreaterThan(0);
    for (const book of results) expect(JSON.stringify(book).toLowerCase()).toContain('copy');
  });

  it('census: counties and states with their latest population, Latin-1 names intact', async () => {
    const { results } = await ok('census', 'doña ana');
    expect(results[0]).toMatchObject({ level: 'county', name: 'Doña Ana County, New Mexico', state_fips: '35', county_fips: '013', year: 2019 });
    const states = await ok('census', 'texas');
    expect(states.results[0]).toMatchObject({ level: 'state', name: 'Texas', year: 2023 });
    expect(typeof states.results[0]!.population).toBe('number');
  });

  it('food: description words, category, and the main nutrients', async () => {
    const { results } = await ok('food', 'butter salted');
    expect(results[0]).toMatchObject({ fdc_id: 9001001, description: 'Butter, salted', category: 'Dairy and Egg Products', energy_kcal: 717, fat_g: 81.11 });
  });

  it('pwc: by arXiv id or words, with the code repositories', async () => {
    const { results } = await ok('pwc', '1706.03762');
    expect(results[0]).toMatchObject({ title: 'Attention Is All You Need' });
    expect(results[0]!.repositories).toContainEqual({ repo_url: 'https://github.com/tensorflow/tensor2tensor', is_official: true, framework: 'tf' });
  });

  it('sec: an exact ticker first, with recent filings', async () => {
    const { results } = await ok('sec', 'tsla');
    expect(results[0]).toMatchObject({ ticker: 'TSLA', cik: 1318605 });
    expect((results[0]!.recent_filings as unknown[]).length).toBe(5);
  });

  it('pages with limit and counts every match in total', async () => {
    const page = await ok('sec', 'bank', 3);
    expect(page.results).toHaveLength(3);
    expect(page.total).toBeGreaterThan(3);
  });

  it('treats % and _ in keywords as plain characters', async () => {
    expect(await ok('gutenberg', '%')).toEqual({ results: [], total: 0 });
    expect(await ok('gutenberg', '___')).toEqual({ results: [], total: 0 });
  });
});

describe('POST /v1/lookups errors', () => {
  it('400 QUERY_INVALID for a live source or a bad limit', async () => {
    expect(await lookup({ source: 'wiki', keywords: 'x' })).toMatchObject({ status: 400, body: { code: 'QUERY_INVALID' } });
    expect(await lookup({ source: 'sec', keywords: 'x', limit: 500 })).toMatchObject({ status: 400, body: { code: 'QUERY_INVALID' } });
  });
});

describe('POST /v1/lookups ranking: exact, then whole-word prefix, then whole words, then substrings', () => {
  const names = (r: LookupResponse, key: string) => r.results.map((row) => row[key]);

  it('gutenberg: an exact title first, whole-word titles before "Warden"-style substrings', async () => {
    expect((await ok('gutenberg', 'the art of war')).results[0]).toMatchObject({ text_id: 132, title: 'The Art of War' });
    const titles = names(await ok('gutenberg', 'war', 50), 'title') as string[];
    const wholeWord = titles.findLastIndex((t) => /(^|[^a-z])wars?([^a-z]|$)/i.test(t));
    const substring = titles.findIndex((t) => !/(^|[^a-z])wars?([^a-z]|$)/i.test(t) && /war/i.test(t));
    expect(wholeWord).toBeGreaterThanOrEqual(0);
    expect(substring).toBeGreaterThan(wholeWord);
  });

  it('census: "York County" counties (prefix) before the far larger New York state (whole word)', async () => {
    const { results } = await ok('census', 'york');
    expect(results[0]).toMatchObject({ name: 'York County, Pennsylvania' });
    const state = results.findIndex((r) => r.name === 'New York');
    const lastYork = results.findLastIndex((r) => String(r.name).startsWith('York County'));
    expect(state).toBeGreaterThan(lastYork);
  });

  it('food: descriptions starting with the word, then containing it, then "Butterbur"-style substrings', async () => {
    const list = names(await ok('food', 'butter', 50), 'description') as string[];
    expect(list[0]).toBe('Butter, salted');
    const firstNotPrefix = list.findIndex((d) => !/^butter([^a-z]|$)/i.test(d));
    expect(list.slice(firstNotPrefix).some((d) => /^butter([^a-z]|$)/i.test(d))).toBe(false);
    expect(list.indexOf('Oil, cocoa butter')).toBeLessThan(list.indexOf('Butterbur, canned'));
  });

  it('pwc: a title match before newer papers that only mention the words in their abstract', async () => {
    const { results } = await ok('pwc', 'attention');
    expect(results[0]).toMatchObject({ arxiv_id: '1706.03762' });
  });

  it('sec: an exact company name first, then names starting with the words, then the others', async () => {
    expect((await ok('sec', 'apple inc.')).results[0]).toMatchObject({ ticker: 'AAPL' });
    const titles = names(await ok('sec', 'royal', 50), 'title') as string[];
    const firstOther = titles.findIndex((t) => !/^royal\b/i.test(t));
    expect(titles.slice(0, firstOther)).toEqual(expect.arrayContaining(['ROYAL BANK OF CANADA', 'ROYAL GOLD INC']));
    expect(titles.slice(firstOther).some((t) => /^royal\b/i.test(t))).toBe(false);
    expect(titles.slice(firstOther)).toContain('Royalty Pharma plc');
  });
});

describe('the sandbox on the real export', () => {
  const sql = (text: string) => postQuery(served.runner.url, { queryId: randomUUID(), sql: text, format: 'json' });

  it('refuses engine-state and settings queries by name, and every lookup keeps answering', async () => {
    for (const [text, name] of [
      ['SELECT * FROM enable_peg_parser()', 'Function not allowed: enable_peg_parser'],
      ['SELECT * FROM pg_settings', 'Table not allowed: pg_settings'],
      ['SELECT * FROM pragma_database_list', 'Table not allowed: pragma_database_list'],
      ["SELECT current_setting('temp_directory')", 'Function not allowed: current_setting'],
      ['SELECT version()', 'Function not allowed: version'],
      ['SELECT * FROM _search_gutenberg_postings', 'Table not allowed: _search_gutenberg_postings'],
    ] as const) {
      expect(await sql(text)).toMatchObject({ status: 400, body: { code: 'QUERY_INVALID', message: name } });
    }
    for (const source of ['gutenberg', 'census', 'food', 'pwc', 'sec']) {
      expect((await lookup({ source, keywords: 'a', limit: 1 })).status).toBe(200);
    }
  });

  it('refuses a whole table in one cell: list(f) over food_nutrients and string_agg over sec_companies', async () => {
    const listed = await sql('SELECT list(f) FROM food_nutrients f');
    expect(listed).toMatchObject({ status: 413, body: { code: 'QUERY_RESULT_TOO_LARGE' } });
    const joined = await sql('SELECT string_agg(s::VARCHAR, chr(10)) FROM sec_companies s');
    expect(joined).toMatchObject({ status: 413, body: { code: 'QUERY_RESULT_TOO_LARGE' } });
  });
});
