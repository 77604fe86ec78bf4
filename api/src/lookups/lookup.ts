/**
 * The one data lookup (STYLE §7): the REST routes and the MCP `search_service` tool both call
 * `lookup`, then `settleLookup` with their request. Live sources go through the live core (etiquette,
 * coalescing, stored copies, stale fallback); stored sources through the query-runner.
 */
import { type Source, findSource, sourceNames } from '@uda/shared/catalog';
import type { StoredSourceId } from './types.ts';
import { priceMicro } from '../prices.ts';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import { type LiveData, liveLookup, wikiArticleLookup } from '../live/lookup.ts';
import type { LiveSource } from '../live/types.ts';
import { parseWikipediaUrl } from '../live/wikipedia.ts';
import type { Caller } from '../request-context.ts';
import type { LiveDeps } from '../live/lookup.ts';
import type { Metrics } from '../metrics.ts';
import type { StoredLookupCache } from './stored-cache.ts';
import { lookupFailure, notFound } from './errors.ts';
import type { LookupData, LookupOutcome } from './types.ts';

/** What a lookup reads: the live sources, the stored ones, and its counter. */
export interface LookupServices {
  readonly live: LiveDeps;
  readonly storedLookups: StoredLookupCache;
  readonly metrics: Pick<Metrics, 'lookups'>;
}

export interface LookupRequest {
  /** Source id or alias, any case. */
  source: string;
  /** Checked keywords (see input.ts). */
  keywords: string;
  limit: number;
}

export function unsupportedSource(name: string): ApiError {
  return new ApiError(ErrorCode.INVALID_INPUT, {
    message: `Unsupported source "${name}". Valid sources and aliases: ${sourceNames().join(', ')}.`,
  });
}

export function resolveSource(name: string): Source {
  const source = findSource(name);
  if (!source) throw unsupportedSource(name);
  return source;
}

export async function lookup(services: LookupServices, caller: Caller, request: LookupRequest): Promise<LookupOutcome> {
  const source = resolveSource(request.source);
  return counted(services, source, async () => {
    let data: LookupData;
    try {
      data = source.kind === 'live' ? await searchLive(services, source.id as LiveSource, request) : await searchStored(services, source.id as StoredSourceId, request);
    } catch (error) {
      throw lookupFailure(error);
    }
    if (data.results.length === 0) throw notFound(request.keywords, source.id);
    return outcome(caller, source, data);
  });
}

/** `GET /https:/{wikipediaUrl}`: one article, billed as one encyclopedia row. */
export async function articleLookup(services: LookupServices, caller: Caller, url: string): Promise<LookupOutcome> {
  const ref = parseWikipediaUrl(url);
  if (!ref) throw new ApiError(ErrorCode.INVALID_INPUT, { message: 'Only article URLs of the form https://{lang}.wikipedia.org/wiki/{Title} are supported.' });
  const source = resolveSource('wiki');
  return counted(services, source, async () => {
    let live: LiveData;
    try {
      live = await wikiArticleLookup(ref, services.live);
    } catch (error) {
      throw lookupFailure(error);
    }
    if (live.results.length === 0) throw notFound(ref.title, source.id);
    return outcome(caller, source, { source: 'wiki', query: url, ...live });
  });
}

/**
 * `uda_lookups_total{source,outcome}`: one per lookup of a known source, by what it found (`hit`,
 * `stale` from a stored copy, `miss` when nothing matched) or the error code it failed with. Billing
 * comes after, so a hit refused for credit still counts as a hit: the source answered.
 */
async function counted(services: LookupServices, source: Source, search: () => Promise<LookupOutcome>): Promise<LookupOutcome> {
  try {
    const found = await search();
    services.metrics.lookups.inc({ source: source.id, outcome: found.data.stale ? 'stale' : 'hit' });
    return found;
  } catch (error) {
    const code = error instanceof ApiError ? error.code : ErrorCode.INTERNAL_ERROR;
    services.metrics.lookups.inc({ source: source.id, outcome: code === ErrorCode.LOOKUP_NOT_FOUND ? 'miss' : code });
    throw error;
  }
}

async function searchLive(services: LookupServices, source: LiveSource, request: LookupRequest): Promise<LookupData> {
  const live = await liveLookup(source, request.keywords, request.limit, services.live);
  return { source, query: request.keywords, ...live };
}

async function searchStored(services: LookupServices, source: StoredSourceId, request: LookupRequest): Promise<LookupData> {
  const found = await services.storedLookups.lookup({ source, keywords: request.keywords, limit: request.limit });
  return { source, query: request.keywords, results: found.results, total: found.total };
}

/** DECISIONS §3: the rows of a lookup are the items in `data.results`, at the source's class and the caller's tier. */
function outcome(caller: Caller, source: Source, data: LookupData): LookupOutcome {
  const rows = data.results.length;
  return { source, data, rows, costMicro: caller.kind === 'account' ? priceMicro(source.priceClass, caller.tier, rows) : 0 };
}
