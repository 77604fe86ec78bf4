/** arXiv API: `GET /api/query?search_query=all:…` answering an Atom feed (DECISIONS §2). */
import { arxivRecords } from '@uda/shared/live-records';
import { UpstreamError } from './errors.ts';
import { httpGet } from './http.ts';
import { endpoint, normalised } from './types.ts';
import type { ClientAnswer, ClientOptions, LiveClient } from './types.ts';

/**
 * Each keyword becomes `all:word`, joined by AND. Characters with a meaning in arXiv's query
 * syntax (quotes, parentheses, colons) are dropped so keywords cannot change the query's structure.
 */
export function arxivSearchQuery(keywords: string): string {
  const words = keywords
    .replace(/["():\\]/g, ' ')
    .split(/\s+/)
    .filter((w) => w && !/^(AND|OR|ANDNOT)$/.test(w));
  return words.map((w) => `all:${w}`).join(' AND ');
}

export class ArxivClient implements LiveClient {
  readonly source = 'arxiv';
  readonly #options: ClientOptions;

  constructor(options: ClientOptions) {
    this.#options = options;
  }

  async search(query: string, limit: number): Promise<ClientAnswer> {
    const url = endpoint(this.#options.baseUrl, '/api/query', {
      search_query: arxivSearchQuery(query),
      start: '0',
      max_results: String(limit),
    });
    const reply = await httpGet(this.source, url, this.#options.http, { accept: 'application/atom+xml' });
    const text = reply.body.toString('utf8');
    if ((reply.headers.get('content-type') ?? '').includes('text/html') || /^\s*<!doctype html/i.test(text)) {
      throw new UpstreamError('UPSTREAM_BAD_RESPONSE', this.source, 'HTML page where Atom was expected');
    }
    const results = normalised(this.source, () => arxivRecords(text));
    const total = /<opensearch:totalResults[^>]*>(\d+)</.exec(text)?.[1];
    return { payload: { results, total: total === undefined ? null : Number(total) } };
  }
}
