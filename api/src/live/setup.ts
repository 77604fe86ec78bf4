/**
 * Builds the live clients and the lookup's dependencies from plain config. The composition root
 * (api/src/main.ts) owns reading the environment and choosing Redis or in-memory, PostgreSQL or not.
 */
import { Breakers } from './breaker.ts';
import type { StaleCopyStore } from './copies.ts';
import type { Etiquette } from './etiquette.ts';
import type { HttpOptions } from './http.ts';
import type { LiveClients, LiveDeps } from './lookup.ts';
import { SingleFlight } from './single-flight.ts';
import { ArxivClient } from './arxiv.ts';
import { OpenAlexClient } from './openalex.ts';
import { PypiClient } from './pypi.ts';
import { StackExchangeClient } from './stackexchange.ts';
import { WikipediaClient } from './wikipedia.ts';

export interface LiveConfig {
  contactEmail: string;
  timeoutMs: number;
  maxResponseBytes: number;
  wikipediaBaseUrl: string;
  wikipediaRestBaseUrl: string;
  arxivBaseUrl: string;
  stackexchangeBaseUrl: string;
  stackexchangeKey: string | undefined;
  pypiBaseUrl: string;
  pypiIndexTtlMs: number;
  openalexBaseUrl: string;
  openalexApiKey: string | undefined;
  breakerFailureThreshold: number;
  breakerCooldownMs: number;
  freshCacheMs: number;
}

export const DEFAULT_LIVE_CONFIG: LiveConfig = {
  contactEmail: 'ops@example.org',
  timeoutMs: 10_000,
  maxResponseBytes: 5 * 1024 * 1024,
  wikipediaBaseUrl: 'https://en.wikipedia.org',
  wikipediaRestBaseUrl: 'https://{lang}.wikipedia.org',
  arxivBaseUrl: 'https://export.arxiv.org',
  stackexchangeBaseUrl: 'https://api.stackexchange.com',
  stackexchangeKey: undefined,
  pypiBaseUrl: 'https://pypi.org',
  pypiIndexTtlMs: 3_600_000,
  openalexBaseUrl: 'https://api.openalex.org',
  openalexApiKey: undefined,
  breakerFailureThreshold: 5,
  breakerCooldownMs: 30_000,
  freshCacheMs: 0,
};

/** One line of help per setting, for the composition root's config schema and docs/configuration.md. */
export const LIVE_CONFIG_HELP: Readonly<Record<keyof LiveConfig, string>> = {
  contactEmail: 'Contact address put in the User-Agent sent to every live upstream (Wikimedia and arXiv ask for one).',
  timeoutMs: 'Deadline for one upstream request, in ms; a timeout answers UPSTREAM_UNAVAILABLE.',
  maxResponseBytes: 'Largest upstream answer read (after decompression), in bytes; larger is UPSTREAM_BAD_RESPONSE.',
  wikipediaBaseUrl: 'MediaWiki Action API base for keyword search (…/w/api.php is appended).',
  wikipediaRestBaseUrl: 'Wikipedia REST base for page summaries; {lang} is replaced by the article language.',
  arxivBaseUrl: 'arXiv API base (…/api/query is appended).',
  stackexchangeBaseUrl: 'Stack Exchange API base (…/2.3/search/advanced is appended).',
  stackexchangeKey: 'Optional Stack Exchange app key; raises the daily quota.',
  pypiBaseUrl: 'PyPI base for /pypi/{name}/json and the /simple/ name index.',
  pypiIndexTtlMs: 'How long the PyPI name index is kept in memory before it is fetched again, in ms.',
  openalexBaseUrl: 'OpenAlex API base (…/works is appended).',
  openalexApiKey: 'OpenAlex API key (required by OpenAlex since Feb 2026); without it OpenAlex lookups answer UPSTREAM_FORBIDDEN.',
  breakerFailureThreshold: 'Consecutive UPSTREAM_UNAVAILABLE failures that open an upstream circuit.',
  breakerCooldownMs: 'How long an open circuit stays open before one probe is let through, in ms.',
  freshCacheMs: 'Serve a stored answer younger than this without calling the upstream, in ms (0 = always fetch live).',
};

/** Wikimedia and arXiv ask for a User-Agent that names the client and gives a contact. */
export function userAgent(contactEmail: string): string {
  return `UnifiedDataAPI/0.1 (live lookups; mailto:${contactEmail})`;
}

export function createLiveClients(config: LiveConfig, observe?: HttpOptions['observe']): LiveClients {
  const http: HttpOptions = { userAgent: userAgent(config.contactEmail), timeoutMs: config.timeoutMs, maxBytes: config.maxResponseBytes, observe };
  return {
    wiki: new WikipediaClient({ baseUrl: config.wikipediaBaseUrl, restBaseUrl: config.wikipediaRestBaseUrl, http }),
    arxiv: new ArxivClient({ baseUrl: config.arxivBaseUrl, http }),
    stackexchange: new StackExchangeClient({ baseUrl: config.stackexchangeBaseUrl, key: config.stackexchangeKey, http }),
    pypi: new PypiClient({ baseUrl: config.pypiBaseUrl, indexTtlMs: config.pypiIndexTtlMs, http }),
    openalex: new OpenAlexClient({ baseUrl: config.openalexBaseUrl, apiKey: config.openalexApiKey, http }),
  };
}

export interface LiveServices {
  config: LiveConfig;
  etiquette: Etiquette;
  copies: StaleCopyStore;
  onBackgroundError?: (error: unknown) => void;
  /** Told the duration of every upstream call (the metrics). */
  observeUpstream?: HttpOptions['observe'];
}

export function createLiveDeps({ config, etiquette, copies, onBackgroundError, observeUpstream }: LiveServices): LiveDeps {
  return {
    clients: createLiveClients(config, observeUpstream),
    etiquette,
    copies,
    breakers: new Breakers({ failureThreshold: config.breakerFailureThreshold, cooldownMs: config.breakerCooldownMs }),
    flights: new SingleFlight(),
    freshForMs: config.freshCacheMs,
    ...(onBackgroundError ? { onBackgroundError } : {}),
  };
}
