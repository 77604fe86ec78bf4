/**
 * Stack Exchange API 2.3 `/search/advanced` (DECISIONS §2). Its answers are always compressed
 * (http.ts decodes them) and may carry `backoff`, which the lookup core records in the shared
 * etiquette so that no pod calls the method again before it passes.
 */
import { stackExchangeRecords } from '@uda/shared/live-records';
import { UpstreamError } from './errors.ts';
import { httpGet, parseJson } from './http.ts';
import { endpoint, normalised } from './types.ts';
import type { ClientAnswer, ClientOptions, LiveClient } from './types.ts';

export interface StackExchangeOptions extends ClientOptions {
  site?: string;
  /** Optional app key: raises the daily quota from 300 to 10,000 requests. */
  key?: string;
}

interface SeError {
  error_id?: number;
  error_name?: string;
  error_message?: string;
  backoff?: number;
}

export class StackExchangeClient implements LiveClient {
  readonly source = 'stackexchange';
  readonly #options: StackExchangeOptions;

  constructor(options: StackExchangeOptions) {
    this.#options = options;
  }

  async search(query: string, limit: number): Promise<ClientAnswer> {
    const site = this.#options.site ?? 'stackoverflow';
    const params: Record<string, string> = { q: query, site, pagesize: String(limit), order: 'desc', sort: 'relevance' };
    if (this.#options.key) params.key = this.#options.key;
    const url = endpoint(this.#options.baseUrl, '/2.3/search/advanced', params);
    // Stack Exchange reports its own errors, including throttling, as a 400 with a JSON body.
    const reply = await httpGet(this.source, url, this.#options.http, { accept: 'application/json', passStatuses: [400] });
    const doc = parseJson(this.source, reply);
    if (reply.status === 400) throw seError(this.source, doc as SeError);
    const results = normalised(this.source, () => stackExchangeRecords(doc, site));
    const total = (doc as { total?: unknown }).total;
    const backoff = (doc as SeError).backoff;
    return {
      payload: { results, total: typeof total === 'number' ? total : null },
      ...(typeof backoff === 'number' && backoff > 0 ? { backoffSeconds: backoff } : {}),
    };
  }
}

/** `throttle_violation` (error_id 502) is rate limiting; its message states the wait, e.g. "available in 82 seconds". */
function seError(source: string, doc: SeError): UpstreamError {
  const detail = `${doc.error_id ?? '?'} ${doc.error_name ?? 'unknown'}: ${doc.error_message ?? ''}`;
  if (doc.error_name === 'throttle_violation') {
    const seconds = /available in (\d+) seconds?/i.exec(doc.error_message ?? '')?.[1];
    const wait = doc.backoff ?? (seconds === undefined ? undefined : Number(seconds));
    return new UpstreamError('UPSTREAM_RATE_LIMITED', source, detail, wait);
  }
  if (doc.error_name === 'access_denied' || doc.error_name === 'access_token_required' || doc.error_name === 'key_required') {
    return new UpstreamError('UPSTREAM_FORBIDDEN', source, detail);
  }
  return new UpstreamError('UPSTREAM_BAD_RESPONSE', source, detail);
}
