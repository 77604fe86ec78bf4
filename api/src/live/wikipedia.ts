/**
 * Wikipedia: MediaWiki `action=query&list=search` for keywords, and the REST page summary for one
 * article (the `/https:/{wikipediaUrl}` route). DECISIONS §2.
 */
import { wikiSearchRecords, wikiSummaryRecord } from '@uda/shared/live-records';
import { httpGet, parseJson } from './http.ts';
import type { HttpOptions } from './http.ts';
import { endpoint, normalised } from './types.ts';
import type { ClientAnswer, LiveClient } from './types.ts';

export interface WikipediaOptions {
  /** Action API base for search, e.g. `https://en.wikipedia.org`. */
  baseUrl: string;
  /** REST base; `{lang}` is replaced by the article's language, e.g. `https://{lang}.wikipedia.org`. */
  restBaseUrl: string;
  http: HttpOptions;
}

export class WikipediaClient implements LiveClient {
  readonly source = 'wiki';
  readonly #options: WikipediaOptions;

  constructor(options: WikipediaOptions) {
    this.#options = options;
  }

  async search(query: string, limit: number): Promise<ClientAnswer> {
    const url = endpoint(this.#options.baseUrl, '/w/api.php', {
      action: 'query',
      list: 'search',
      srsearch: query,
      format: 'json',
      srlimit: String(limit),
    });
    const doc = parseJson(this.source, await httpGet(this.source, url, this.#options.http, { accept: 'application/json' }));
    const results = normalised(this.source, () => wikiSearchRecords(doc));
    const total = (doc as { query?: { searchinfo?: { totalhits?: unknown } } }).query?.searchinfo?.totalhits;
    return { payload: { results, total: typeof total === 'number' ? total : null } };
  }

  /** One article by title; a missing article is an empty answer (the route's 404), not an error. */
  async article(lang: string, title: string): Promise<ClientAnswer> {
    const base = this.#options.restBaseUrl.replace('{lang}', lang);
    const url = endpoint(base, `/api/rest_v1/page/summary/${encodeURIComponent(title.replace(/ /g, '_'))}`);
    const reply = await httpGet(this.source, url, this.#options.http, { accept: 'application/json', passStatuses: [404] });
    if (reply.status === 404) return { payload: { results: [], total: 0 } };
    const doc = parseJson(this.source, reply);
    return { payload: { results: [normalised(this.source, () => wikiSummaryRecord(doc))], total: 1 } };
  }
}

export interface WikipediaArticleRef {
  lang: string;
  title: string;
}

const WIKI_HOST = /^([a-z]{2,3}(?:-[a-z0-9]+)*)(?:\.m)?\.wikipedia\.org$/;

/**
 * Parses `https://xx.wikipedia.org/wiki/Title`. Only wikipedia.org hosts over https are accepted,
 * so the route can never be used to make the service fetch an arbitrary URL.
 */
export function parseWikipediaUrl(input: string): WikipediaArticleRef | null {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return null;
  }
  const host = WIKI_HOST.exec(url.hostname);
  if (url.protocol !== 'https:' || !host || url.username || url.password || url.port) return null;
  if (!url.pathname.startsWith('/wiki/')) return null;
  let title: string;
  try {
    title = decodeURIComponent(url.pathname.slice('/wiki/'.length)).replace(/_/g, ' ').trim();
  } catch {
    return null;
  }
  // MediaWiki titles are at most 255 bytes and never contain these or control characters.
  if (!title || Buffer.byteLength(title) > 255 || /[#<>[\]{}|]/.test(title) || hasControl(title)) return null;
  return { lang: host[1]!, title };
}


const hasControl = (s: string): boolean => [...s].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
