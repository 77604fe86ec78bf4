/**
 * Upstream documents → the flat records that the lookups return and the exporter stores as SQL
 * tables. One normaliser per upstream format, shared by the API's live clients and the exporter,
 * so that a stored copy and a fresh answer have the same shape.
 *
 * Each parser throws `UpstreamFormatError` when the document is not what the upstream documents.
 */
import { XMLParser } from 'fast-xml-parser';
import { z } from 'zod';

export class UpstreamFormatError extends Error {
  override readonly name = 'UpstreamFormatError';
}

function parseWith<T>(schema: z.ZodType<T>, doc: unknown, what: string): T {
  const result = schema.safeParse(doc);
  if (!result.success) throw new UpstreamFormatError(`${what}: ${result.error.issues[0]?.message ?? 'unexpected shape'}`);
  return result.data;
}

/** Stack Exchange and MediaWiki snippets carry HTML entities and markup. */
export function plainText(html: string): string {
  return html
    .replace(/<[^>]*>/g, '')
    .replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => String.fromCodePoint(parseInt(hex, 16)))
    .replace(/&#(\d+);/g, (_, dec: string) => String.fromCodePoint(Number(dec)))
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

export interface WikiRecord {
  pageid: number;
  title: string;
  url: string;
  description: string | null;
  extract: string | null;
  updated_at: string | null;
}

export function wikiArticleUrl(title: string, lang = 'en'): string {
  return `https://${lang}.wikipedia.org/wiki/${encodeURIComponent(title.replace(/ /g, '_'))}`;
}

const wikiSearchSchema = z.object({
  query: z.object({
    search: z.array(z.object({ title: z.string(), pageid: z.number(), snippet: z.string().optional(), timestamp: z.string().optional() })),
  }),
});

/** MediaWiki `action=query&list=search`. */
export function wikiSearchRecords(doc: unknown): WikiRecord[] {
  return parseWith(wikiSearchSchema, doc, 'MediaWiki search').query.search.map((hit) => ({
    pageid: hit.pageid,
    title: hit.title,
    url: wikiArticleUrl(hit.title),
    description: null,
    extract: hit.snippet === undefined ? null : plainText(hit.snippet),
    updated_at: hit.timestamp ?? null,
  }));
}

const wikiSummarySchema = z.object({
  title: z.string(),
  pageid: z.number(),
  description: z.string().optional(),
  extract: z.string().optional(),
  timestamp: z.string().optional(),
  content_urls: z.object({ desktop: z.object({ page: z.string() }) }).optional(),
});

/** Wikipedia REST `page/summary/{title}`. */
export function wikiSummaryRecord(doc: unknown): WikiRecord {
  const page = parseWith(wikiSummarySchema, doc, 'Wikipedia summary');
  return {
    pageid: page.pageid,
    title: page.title,
    url: page.content_urls?.desktop.page ?? wikiArticleUrl(page.title),
    description: page.description ?? null,
    extract: page.extract ?? null,
    updated_at: page.timestamp ?? null,
  };
}

export interface ArxivRecord {
  arxiv_id: string;
  version: string | null;
  title: string;
  summary: string;
  authors: string[];
  primary_category: string | null;
  categories: string[];
  published: string | null;
  updated: string | null;
  url: string;
  pdf_url: string | null;
}

const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  removeNSPrefix: true,
  isArray: (name) => ['entry', 'author', 'category', 'link'].includes(name),
});

const asText = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const squash = (s: string): string => s.replace(/\s+/g, ' ').trim();

/** arXiv API Atom feed. */
export function arxivRecords(body: string): ArxivRecord[] {
  let doc: { feed?: { entry?: Record<string, unknown>[] } };
  try {
    doc = xml.parse(body, true) as typeof doc;
  } catch (error) {
    throw new UpstreamFormatError(`arXiv feed is not XML: ${(error as Error).message}`);
  }
  if (!doc.feed) throw new UpstreamFormatError('arXiv answer has no Atom <feed>');
  return (doc.feed.entry ?? []).map((entry) => {
    const idUrl = asText(entry.id);
    const match = /abs\/(.+?)(v\d+)?$/.exec(idUrl);
    if (!match) throw new UpstreamFormatError(`arXiv entry id is not an abs URL: ${idUrl}`);
    const links = (entry.link ?? []) as { '@href'?: string; '@title'?: string; '@rel'?: string }[];
    return {
      arxiv_id: match[1]!,
      version: match[2] ?? null,
      title: squash(asText(entry.title)),
      summary: squash(asText(entry.summary)),
      authors: ((entry.author ?? []) as { name?: unknown }[]).map((a) => squash(asText(a.name))),
      primary_category: (entry.primary_category as { '@term'?: string } | undefined)?.['@term'] ?? null,
      categories: ((entry.category ?? []) as { '@term'?: string }[]).map((c) => c['@term'] ?? '').filter(Boolean),
      published: asText(entry.published) || null,
      updated: asText(entry.updated) || null,
      url: links.find((l) => l['@rel'] === 'alternate')?.['@href'] ?? idUrl,
      pdf_url: links.find((l) => l['@title'] === 'pdf')?.['@href'] ?? null,
    };
  });
}

export interface StackExchangeRecord {
  question_id: number;
  site: string;
  title: string;
  tags: string[];
  score: number;
  answer_count: number;
  view_count: number | null;
  is_answered: boolean;
  link: string;
  created_at: string;
  last_activity_at: string | null;
}

const seSchema = z.object({
  items: z.array(
    z.object({
      question_id: z.number(),
      title: z.string(),
      tags: z.array(z.string()).default([]),
      score: z.number(),
      answer_count: z.number().default(0),
      view_count: z.number().optional(),
      is_answered: z.boolean().default(false),
      link: z.string(),
      creation_date: z.number(),
      last_activity_date: z.number().optional(),
    }),
  ),
  backoff: z.number().optional(),
  quota_remaining: z.number().optional(),
});

const unixToIso = (seconds: number): string => new Date(seconds * 1000).toISOString();

/** Stack Exchange API 2.x question lists (`/search/advanced`, `/questions`). Titles arrive HTML-escaped. */
export function stackExchangeRecords(doc: unknown, site: string): StackExchangeRecord[] {
  return parseWith(seSchema, doc, 'Stack Exchange').items.map((q) => ({
    question_id: q.question_id,
    site,
    title: plainText(q.title),
    tags: q.tags,
    score: q.score,
    answer_count: q.answer_count,
    view_count: q.view_count ?? null,
    is_answered: q.is_answered,
    link: q.link,
    created_at: unixToIso(q.creation_date),
    last_activity_at: q.last_activity_date === undefined ? null : unixToIso(q.last_activity_date),
  }));
}

export interface PypiRecord {
  name: string;
  version: string;
  summary: string | null;
  license: string | null;
  author: string | null;
  requires_python: string | null;
  home_page: string | null;
  package_url: string;
}

const pypiSchema = z.object({
  info: z.object({
    name: z.string(),
    version: z.string(),
    summary: z.string().nullish(),
    license: z.string().nullish(),
    author: z.string().nullish(),
    requires_python: z.string().nullish(),
    home_page: z.string().nullish(),
    package_url: z.string().optional(),
  }),
});

/** PyPI JSON API `/pypi/{name}/json`. Empty strings mean "not given". */
export function pypiRecord(doc: unknown): PypiRecord {
  const { info } = parseWith(pypiSchema, doc, 'PyPI project');
  const orNull = (s: string | null | undefined) => (s ? s : null);
  return {
    name: info.name,
    version: info.version,
    summary: orNull(info.summary),
    license: orNull(info.license),
    author: orNull(info.author),
    requires_python: orNull(info.requires_python),
    home_page: orNull(info.home_page),
    package_url: info.package_url ?? `https://pypi.org/project/${info.name}/`,
  };
}

export interface OpenAlexRecord {
  id: string;
  doi: string | null;
  title: string | null;
  publication_year: number | null;
  publication_date: string | null;
  type: string | null;
  cited_by_count: number;
  authors: string[];
  abstract: string | null;
}

const openAlexSchema = z.object({
  results: z.array(
    z.object({
      id: z.string(),
      doi: z.string().nullish(),
      display_name: z.string().nullish(),
      title: z.string().nullish(),
      publication_year: z.number().nullish(),
      publication_date: z.string().nullish(),
      type: z.string().nullish(),
      cited_by_count: z.number().default(0),
      authorships: z.array(z.object({ author: z.object({ display_name: z.string().nullish() }) })).default([]),
      abstract_inverted_index: z.record(z.string(), z.array(z.number())).nullish(),
    }),
  ),
});

/** OpenAlex ships abstracts as word → positions; put each word back at its positions. */
export function abstractFromInvertedIndex(index: Record<string, number[]> | null | undefined): string | null {
  if (!index) return null;
  const words: string[] = [];
  for (const [word, positions] of Object.entries(index)) for (const p of positions) words[p] = word;
  return words.filter((w) => w !== undefined).join(' ') || null;
}

/** OpenAlex `/works?search=`. */
export function openAlexRecords(doc: unknown): OpenAlexRecord[] {
  return parseWith(openAlexSchema, doc, 'OpenAlex works').results.map((w) => ({
    id: w.id,
    doi: w.doi ?? null,
    title: w.display_name ?? w.title ?? null,
    publication_year: w.publication_year ?? null,
    publication_date: w.publication_date ?? null,
    type: w.type ?? null,
    cited_by_count: w.cited_by_count,
    authors: w.authorships.map((a) => a.author.display_name ?? '').filter(Boolean),
    abstract: abstractFromInvertedIndex(w.abstract_inverted_index),
  }));
}
