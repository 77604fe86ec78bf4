/**
 * Every live upstream's fake on loopback, and the API config that points the live clients at them
 * (route-level tests of the lookups and MCP).
 */
import { startFakeArxiv } from '../fakes/arxiv.ts';
import { startFakeOpenAlex } from '../fakes/openalex.ts';
import { startFakePypi } from '../fakes/pypi.ts';
import { type SeMode, startFakeStackExchange } from '../fakes/stackexchange.ts';
import type { FakeUpstream } from '../fakes/upstream.ts';
import { startFakeWikipedia } from '../fakes/wikipedia.ts';

export interface LiveFakes {
  wiki: FakeUpstream;
  arxiv: FakeUpstream<'empty'>;
  stackexchange: FakeUpstream<SeMode>;
  pypi: FakeUpstream;
  openalex: FakeUpstream;
  /** `config` for `ctx.start`: base URLs, the OpenAlex key, a short upstream deadline. */
  config: Record<string, string>;
  close(): Promise<void>;
}

export async function startLiveFakes(): Promise<LiveFakes> {
  const [wiki, arxiv, stackexchange, pypi, openalex] = await Promise.all([
    startFakeWikipedia(),
    startFakeArxiv(),
    startFakeStackExchange(),
    startFakePypi(),
    startFakeOpenAlex(),
  ]);
  const all = [wiki, arxiv, stackexchange, pypi, openalex];
  return {
    wiki,
    arxiv,
    stackexchange,
    pypi,
    openalex,
    config: {
      WIKIPEDIA_BASE_URL: wiki.url,
      WIKIPEDIA_REST_BASE_URL: wiki.url,
      ARXIV_BASE_URL: arxiv.url,
      STACKEXCHANGE_BASE_URL: stackexchange.url,
      PYPI_BASE_URL: pypi.url,
      OPENALEX_BASE_URL: openalex.url,
      OPENALEX_API_KEY: 'test-key',
      UPSTREAM_TIMEOUT_MS: '400',
    },
    async close() {
      await Promise.all(all.map((fake) => fake.close()));
    },
  };
}
