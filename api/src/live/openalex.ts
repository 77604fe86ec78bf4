/**
 * OpenAlex `GET /works?search=` (DECISIONS §2). An API key is required since February 2026; the
 * abstract is rebuilt from `abstract_inverted_index` by the shared normaliser.
 */
import { openAlexRecords } from '@uda/shared/live-records';
import { UpstreamError } from './errors.ts';
import { httpGet, parseJson } from './http.ts';
import { endpoint, normalised } from './types.ts';
import type { ClientAnswer, ClientOptions, LiveClient } from './types.ts';

export interface OpenAlexOptions extends ClientOptions {
  apiKey: string | undefined;
}

export class OpenAlexClient implements LiveClient {
  readonly source = 'openalex';
  readonly #options: OpenAlexOptions;

  constructor(options: OpenAlexOptions) {
    this.#options = options;
  }

  async search(query: string, limit: number): Promise<ClientAnswer> {
    // Without a key OpenAlex refuses the call; say so without spending an upstream request.
    if (!this.#options.apiKey) throw new UpstreamError('UPSTREAM_FORBIDDEN', this.source, 'no OpenAlex API key configured');
    const url = endpoint(this.#options.baseUrl, '/works', { search: query, 'per-page': String(limit), api_key: this.#options.apiKey });
    const doc = parseJson(this.source, await httpGet(this.source, url, this.#options.http, { accept: 'application/json' }));
    const results = normalised(this.source, () => openAlexRecords(doc));
    const total = (doc as { meta?: { count?: unknown } }).meta?.count;
    return { payload: { results, total: typeof total === 'number' ? total : null } };
  }
}
