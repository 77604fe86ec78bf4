/**
 * The source catalog: the single table of truth that the API, the query-runner and the exporter
 * read (DECISIONS §2). Prices live here by class; the per-tier rates are in `PRICE_PER_ROW_MICRO_USD`.
 */

export type SourceKind = 'live' | 'stored';
export type PriceClass = 'open' | 'encyclopedia';
export type Tier = 'free' | 'developer' | 'pro';

export interface SourceTable {
  /** SQL table name; its prefix up to the first `_` is the source id. */
  readonly name: string;
  readonly description: string;
}

export interface Source {
  readonly id: string;
  readonly aliases: readonly string[];
  readonly kind: SourceKind;
  readonly priceClass: PriceClass;
  readonly title: string;
  readonly tables: readonly SourceTable[];
}

export const SOURCES: readonly Source[] = [
  {
    id: 'wiki',
    aliases: ['wikipedia'],
    kind: 'live',
    priceClass: 'encyclopedia',
    title: 'Wikipedia (MediaWiki search and page summaries)',
    tables: [{ name: 'wiki', description: 'Article summaries: title, url, description, extract' }],
  },
  {
    id: 'arxiv',
    aliases: ['preprints'],
    kind: 'live',
    priceClass: 'open',
    title: 'arXiv preprints (Atom API)',
    tables: [{ name: 'arxiv', description: 'Preprints: arxiv_id, title, summary, authors, categories' }],
  },
  {
    id: 'stackexchange',
    aliases: ['so', 'stackoverflow'],
    kind: 'live',
    priceClass: 'open',
    title: 'Stack Exchange questions (API 2.3)',
    tables: [{ name: 'stackexchange', description: 'Questions: question_id, title, tags, score, link' }],
  },
  {
    id: 'pypi',
    aliases: ['python'],
    kind: 'live',
    priceClass: 'open',
    title: 'Python Package Index (JSON API)',
    tables: [{ name: 'pypi', description: 'Projects: name, version, summary, license, urls' }],
  },
  {
    id: 'openalex',
    aliases: ['works'],
    kind: 'live',
    priceClass: 'open',
    title: 'OpenAlex scholarly works',
    tables: [{ name: 'openalex', description: 'Works: id, doi, title, publication_year, abstract' }],
  },
  {
    id: 'gutenberg',
    aliases: ['books'],
    kind: 'stored',
    priceClass: 'open',
    title: 'Project Gutenberg catalog',
    tables: [{ name: 'gutenberg', description: 'Books: text_id, type, issued, title, language, authors' }],
  },
  {
    id: 'census',
    aliases: ['population'],
    kind: 'stored',
    priceClass: 'open',
    title: 'US Census population estimates',
    tables: [
      { name: 'census_states', description: 'Vintage 2023 nation, region, division and state estimates' },
      { name: 'census_counties', description: 'Vintage 2019 state and county estimates' },
    ],
  },
  {
    id: 'food',
    aliases: ['usda', 'fdc'],
    kind: 'stored',
    priceClass: 'open',
    title: 'USDA FoodData Central (SR Legacy)',
    tables: [
      { name: 'food', description: 'Foods: fdc_id, description, category' },
      { name: 'food_nutrients', description: 'Nutrient amounts per food' },
      { name: 'food_nutrient_types', description: 'Nutrient names and units' },
    ],
  },
  {
    id: 'pwc',
    aliases: ['paperswithcode'],
    kind: 'stored',
    priceClass: 'open',
    title: 'Papers with Code',
    tables: [
      { name: 'pwc_papers', description: 'Papers with abstracts' },
      { name: 'pwc_links', description: 'Links between papers and code repositories' },
    ],
  },
  {
    id: 'sec',
    aliases: ['edgar'],
    kind: 'stored',
    priceClass: 'open',
    title: 'SEC EDGAR companies and filings',
    tables: [
      { name: 'sec_companies', description: 'Companies: cik, ticker, title' },
      { name: 'sec_filings', description: 'Filings from EDGAR indexes and submissions' },
    ],
  },
];

/** SPEC "Credits and metering" §3, in integer micro-USD (DECISIONS §3). */
export const PRICE_PER_ROW_MICRO_USD: Readonly<Record<PriceClass, Readonly<Record<Tier, number>>>> = {
  open: { free: 5_000, developer: 5_000, pro: 4_000 },
  encyclopedia: { free: 25_000, developer: 15_000, pro: 12_500 },
};

const byName = new Map<string, Source>();
for (const source of SOURCES) {
  for (const name of [source.id, ...source.aliases]) byName.set(name, source);
}

/** Finds a source by id or alias, case-insensitively. */
export function findSource(nameOrAlias: string): Source | undefined {
  return byName.get(nameOrAlias.toLowerCase());
}

/** Every accepted name, ids first then aliases, for the 400 message of an unsupported source. */
export function sourceNames(): string[] {
  return [...SOURCES.map((s) => s.id), ...SOURCES.flatMap((s) => s.aliases)];
}

/** DECISIONS §2: "A table's source is its name up to the first `_`". */
export function sourceOfTable(table: string): Source | undefined {
  const prefix = table.toLowerCase().split('_')[0] ?? '';
  const source = byName.get(prefix);
  return source?.tables.some((t) => t.name === table.toLowerCase()) ? source : undefined;
}

/**
 * The lookups' search index tables in `service.db` start with this prefix (`@uda/search/index`
 * names them), which no catalog table has: they map to no source, are not billed, and SQL may not
 * read them.
 */
export const SEARCH_TABLE_PREFIX = '_search_';

export function allTables(): string[] {
  return SOURCES.flatMap((s) => s.tables.map((t) => t.name));
}
