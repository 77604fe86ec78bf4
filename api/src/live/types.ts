/** Plain types shared by the live clients, the etiquette and the lookup core. */
import { UpstreamFormatError } from '@uda/shared/live-records';
import { UpstreamError } from './errors.ts';
import type { HttpOptions } from './http.ts';

export type LiveSource = 'wiki' | 'arxiv' | 'stackexchange' | 'pypi' | 'openalex';

export const LIVE_SOURCES: readonly LiveSource[] = ['wiki', 'arxiv', 'stackexchange', 'pypi', 'openalex'];

/** What goes inside the lookup envelope's `data` on success: the records, plus the upstream's total when it gives one. */
export interface LivePayload {
  results: unknown[];
  total: number | null;
}

export interface ClientAnswer {
  payload: LivePayload;
  /** Seconds the upstream asked us to wait before calling it again (Stack Exchange `backoff`). */
  backoffSeconds?: number;
}

export interface LiveClient {
  readonly source: LiveSource;
  search(query: string, limit: number): Promise<ClientAnswer>;
}

export interface ClientOptions {
  baseUrl: string;
  http: HttpOptions;
}

/** The shared normalisers throw `UpstreamFormatError`; to callers that is a reply we could not read. */
export function normalised<T>(source: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof UpstreamFormatError) throw new UpstreamError('UPSTREAM_BAD_RESPONSE', source, error.message);
    throw error;
  }
}

/** Joins a path to a configured base URL that may itself carry a path prefix. */
export function endpoint(baseUrl: string, path: string, params: Record<string, string> = {}): URL {
  const url = new URL(baseUrl.replace(/\/+$/, '') + path);
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  return url;
}
