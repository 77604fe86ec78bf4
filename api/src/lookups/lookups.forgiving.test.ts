/**
 * Stored lookups find what people mean, end to end through the API, a real query-runner
 * child process and a database the real exporter built from the sample data: plurals both ways,
 * one wrong letter, words split or joined, an apostrophe, extra words; one row (and one charge)
 * per company; and forgiveness never letting a stop word match everything.
 */
import { describe, expect, it } from '@jest/globals';
import type { TestApi } from '@uda/test-support/api-harness';
import { useStoredStack } from '../../test/support/stacks.ts';

const stack = useStoredStack();

interface Envelope {
  data: { results: Record<string, unknown>[]; total: number; error?: string };
}

/** One API per test file's case: started on the stored runner, closed by the caller. */
const start = () => stack.ctx.start({ config: { QUERY_RUNNER_URLS: stack.runner.url } });

async function lookup(api: TestApi, path: string, key?: string): Promise<{ status: number; body: Envelope; cost: string | null }> {
  const res = await api.get(path, { key });
  return { status: res.status, body: (await res.json()) as Envelope, cost: res.headers.get('x-credit-cost') };
}

/** The field `key` of the first `n` results of a lookup that must answer 200. */
async function top(api: TestApi, path: string, key: string, n = 3): Promise<unknown[]> {
  const { status, body } = await lookup(api, path);
  expect({ path, status }).toEqual({ path, status: 200 });
  return body.data.results.slice(0, n).map((row) => row[key]);
}

describe('stored lookups forgive plurals, typos, spaces and apostrophes', () => {
  it('food: "eggs" finds the eggs ("Egg, …") and "strawberry" the strawberries ("Strawberries, …") in the top 3', async () => {
    const api = await start();
    expect((await top(api, '/food/eggs', 'description')).some((d) => /^Egg, /.test(d as string))).toBe(true);
    expect((await top(api, '/food/strawberry', 'description')).some((d) => /^Strawberries, /.test(d as string))).toBe(true);
    expect((await top(api, '/food/strawberries', 'description')).some((d) => /^Strawberries, /.test(d as string))).toBe(true);
    await api.close();
  });

  it('gutenberg and sec: a title with one letter dropped, doubled or two letters swapped, first', async () => {
    const api = await start();
    expect(await top(api, `/books/${encodeURIComponent('pride and prejudce')}`, 'text_id', 1)).toEqual([1342]);
    expect(await top(api, '/books/frankensteinn', 'text_id', 1)).toEqual([84]);
    expect(await top(api, `/books/${encodeURIComponent('secret garedn')}`, 'text_id', 1)).toEqual([113]);
    expect(await top(api, `/sec/${encodeURIComponent('berkshre hathaway')}`, 'cik', 1)).toEqual([1067983]);
    expect(await top(api, '/sec/microsfot', 'ticker', 1)).toEqual(['MSFT']);
    await api.close();
  });

  it('sec: "jp morgan" finds JPMORGAN, "mcdonald\'s" McDonalds, "cocacola" Coca Cola', async () => {
    const api = await start();
    expect(await top(api, `/sec/${encodeURIComponent('jp morgan')}`, 'ticker', 1)).toEqual(['JPM']);
    expect(await top(api, `/sec/${encodeURIComponent("mcdonald's")}`, 'ticker', 1)).toEqual(['MCD']);
    expect(await top(api, '/sec/cocacola', 'ticker', 1)).toEqual(['KO']);
    await api.close();
  });

  it('extra words do not empty the answer: words are dropped from the last one back', async () => {
    const api = await start();
    expect(await top(api, `/books/${encodeURIComponent('the art of war zzqxv')}`, 'text_id', 1)).toEqual([132]);
    await api.close();
  });

  it('a stop word left alone never matches everything: 404, not every book', async () => {
    const api = await start();
    const { status } = await lookup(api, `/books/${encodeURIComponent('the zzqxv')}`);
    expect(status).toBe(404);
    await api.close();
  });

  it('an exact ticker, arXiv id or title still comes first', async () => {
    const api = await start();
    expect(await top(api, '/sec/ko', 'ticker', 1)).toEqual(['KO']);
    expect(await top(api, '/sec/googl', 'ticker', 1)).toEqual(['GOOGL']);
    expect(await top(api, '/pwc/1706.03762', 'arxiv_id', 1)).toEqual(['1706.03762']);
    expect(await top(api, `/books/${encodeURIComponent('the art of war')}`, 'text_id', 1)).toEqual([132]);
    await api.close();
  });

  it('a ticker gets no typos: "agnco" (a share class of AGNC) finds its company alone, not Agnico Eagle', async () => {
    const api = await start();
    const { status, body } = await lookup(api, '/sec/agnco');
    expect(status).toBe(200);
    expect(body.data.total).toBe(1);
    expect(body.data.results[0]!.tickers).toContain('AGNCO');
    await api.close();
  });
});

describe('stored lookups: one row per entity', () => {
  for (const keywords of ['jpmorgan', 'goldman sachs', 'alphabet', 'berkshire hathaway']) {
    it(`sec "${keywords}": each company once (one row per CIK), billed once per company`, async () => {
      const api = await start();
      const { apiKey } = await api.account();
      const { status, body, cost } = await lookup(api, `/sec/${encodeURIComponent(keywords)}?limit=50`, apiKey);
      expect(status).toBe(200);
      const ciks = body.data.results.map((row) => row.cik);
      expect(ciks).toEqual([...new Set(ciks)]);
      expect(cost).toBe(String((body.data.results.length * 5_000) / 1e6));
      await api.close();
    });
  }

  it('sec: a company keeps its main ticker in `ticker` and lists every class in `tickers`', async () => {
    const api = await start();
    const { body } = await lookup(api, '/sec/jpmorgan');
    expect(body.data.results[0]).toMatchObject({ cik: 19617, ticker: 'JPM', title: 'JPMORGAN CHASE & CO' });
    expect(body.data.results[0]!.tickers).toEqual(['JPM', 'JPM-PD', 'JPM-PC', 'JPM-PJ', 'AMJB', 'JPM-PK', 'JPM-PL', 'JPM-PM', 'VYLD']);
    const { body: alphabet } = await lookup(api, '/sec/alphabet');
    expect(alphabet.data.results[0]).toMatchObject({ cik: 1652044, ticker: 'GOOGL', tickers: ['GOOGL', 'GOOG'] });
    await api.close();
  });
});
