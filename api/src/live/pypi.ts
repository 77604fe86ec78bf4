/**
 * PyPI: the JSON API (`/pypi/{name}/json`) for an exact name, plus the PEP 691 simple index for
 * near matches (DECISIONS §2). The index is large and changes slowly, so it is kept in memory for a
 * TTL and loaded once however many lookups ask for it at the same time.
 */
import { UpstreamFormatError, pypiRecord } from '@uda/shared/live-records';
import type { PypiRecord } from '@uda/shared/live-records';
import { httpGet, parseJson } from './http.ts';
import { nearMatches, normalizePypiName } from './pypi-names.ts';
import { endpoint, normalised } from './types.ts';
import type { ClientAnswer, ClientOptions, LiveClient } from './types.ts';

export interface PypiOptions extends ClientOptions {
  /** How long the name index is reused before it is fetched again. */
  indexTtlMs?: number;
  /** The real index is tens of MB, far over the per-answer cap. */
  indexMaxBytes?: number;
  /** At most this many near matches are fetched per lookup (one JSON call each). */
  nearMatchFetches?: number;
  now?: () => number;
}

interface NameIndex {
  names: string[];
  loadedAt: number;
}

export class PypiClient implements LiveClient {
  readonly source = 'pypi';
  readonly #options: PypiOptions;
  #index: NameIndex | undefined;
  #loading: Promise<NameIndex> | undefined;

  constructor(options: PypiOptions) {
    this.#options = options;
  }

  async search(query: string, limit: number): Promise<ClientAnswer> {
    const name = normalizePypiName(query);
    const exact = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/.test(name) ? await this.project(name) : null;
    const wanted = Math.min(limit - (exact ? 1 : 0), this.#options.nearMatchFetches ?? 5);
    const near = wanted > 0 ? await this.near(name, wanted, exact !== null) : [];
    const results = exact ? [exact, ...near] : near;
    return { payload: { results, total: null } };
  }

  /** The project's JSON, or null when PyPI has no such project (404). */
  async project(name: string): Promise<PypiRecord | null> {
    const url = endpoint(this.#options.baseUrl, `/pypi/${encodeURIComponent(name)}/json`);
    const reply = await httpGet(this.source, url, this.#options.http, { accept: 'application/json', passStatuses: [404] });
    if (reply.status === 404) return null;
    const doc = parseJson(this.source, reply);
    return normalised(this.source, () => pypiRecord(doc));
  }

  /** With an exact hit in hand, a failing index only loses the extras; without one it is the lookup's error. */
  async near(name: string, count: number, haveExact: boolean): Promise<PypiRecord[]> {
    let names: string[];
    try {
      names = (await this.index()).names;
    } catch (error) {
      if (haveExact) return [];
      throw error;
    }
    const found = await Promise.all(nearMatches(name, names, count).map((n) => this.project(n)));
    return found.filter((r): r is PypiRecord => r !== null);
  }

  async index(): Promise<NameIndex> {
    const now = (this.#options.now ?? Date.now)();
    if (this.#index && now - this.#index.loadedAt < (this.#options.indexTtlMs ?? 3_600_000)) return this.#index;
    this.#loading ??= this.loadIndex().finally(() => (this.#loading = undefined));
    return this.#loading;
  }

  async loadIndex(): Promise<NameIndex> {
    const http = { ...this.#options.http, maxBytes: this.#options.indexMaxBytes ?? 200 * 1024 * 1024 };
    const url = endpoint(this.#options.baseUrl, '/simple/');
    const reply = await httpGet(this.source, url, http, { accept: 'application/vnd.pypi.simple.v1+json' });
    const doc = parseJson(this.source, reply) as { projects?: { name?: unknown }[] };
    const projects = normalised(this.source, () => indexNames(doc));
    this.#index = { names: projects, loadedAt: (this.#options.now ?? Date.now)() };
    return this.#index;
  }
}

function indexNames(doc: { projects?: { name?: unknown }[] }): string[] {
  if (!Array.isArray(doc.projects)) throw new UpstreamFormatError('PyPI simple index: no projects list');
  return doc.projects.flatMap((p) => (typeof p.name === 'string' ? [normalizePypiName(p.name)] : []));
}
