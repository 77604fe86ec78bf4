/**
 * The page of a stored lookup, as our own parameterised SQL (never user SQL, so the textual
 * validator does not apply: "Drop City" is a fine book title): the ranking (`rank.ts`) picks the
 * page's documents in memory, and this one prepared statement per source reads their rows by key
 * from the index's `docs` table and the source tables. The result shapes are documented in the
 * README ("Lookup results") and pinned by tests.
 */
import type { STORED_SOURCES } from '@uda/shared/runner-contract';
import { searchTable } from '@uda/shared/search';

export interface LookupQuery {
  readonly sql: string;
  /** The page's documents, best first. */
  readonly docs: readonly number[];
}

export type StoredLookupSource = (typeof STORED_SOURCES)[number];

/**
 * The page's columns for the ranked documents: `page` must select from `ranked r JOIN docs d`, in
 * the ranking's order (`ORDER`). The
 * columns from the source's other tables (nutrients, repositories, filings) are the index's page
 * columns in `docs`, so a page reads the source tables by key for its own rows only.
 */
type PageSql = (docs: string) => string;

const ORDER = 'ORDER BY list_position($1, r.doc)';

const PAGES: Record<StoredLookupSource, PageSql> = {
  gutenberg: (docs) => `SELECT g.text_id, g.title, g.type, g.issued, g.languages, g.authors, g.subjects, g.bookshelves,
         'https://www.gutenberg.org/ebooks/' || g.text_id AS url
      FROM ranked r JOIN ${docs} d ON d.doc = r.doc JOIN gutenberg g ON g.text_id = d.text_id
      ${ORDER}`,
  census: (docs) => `SELECT p.level, p.name, p.state_fips, p.county_fips, p.population, p.year, p.earliest_population
      FROM ranked r JOIN ${docs} d ON d.doc = r.doc JOIN (
          SELECT CASE sumlev WHEN '010' THEN 'nation' WHEN '020' THEN 'region' WHEN '030' THEN 'division' ELSE 'state' END AS level,
                 name, state AS state_fips, NULL::VARCHAR AS county_fips,
                 popestimate2023 AS population, 2023 AS year, popestimate2020 AS earliest_population
          FROM census_states
          UNION ALL
          SELECT 'county', ctyname || ', ' || stname, state, county, popestimate2019, 2019, popestimate2010
          FROM census_counties WHERE sumlev = '050') p ON p.name = d.name
      ${ORDER}`,
  food: (docs) => `SELECT f.fdc_id, f.description, f.category, f.ndb_number,
         d.energy_kcal, d.protein_g, d.fat_g, d.carbohydrate_g
      FROM ranked r JOIN ${docs} d ON d.doc = r.doc JOIN food f ON f.fdc_id = d.fdc_id
      ${ORDER}`,
  pwc: (docs) => `SELECT p.paper_url, p.arxiv_id, p.title, p.abstract, p.authors, p.tasks, p.date, p.url_abs, p.url_pdf,
         coalesce(d.repositories, []) AS repositories
      FROM ranked r JOIN ${docs} d ON d.doc = r.doc JOIN pwc_papers p ON p.paper_url = d.paper_url
      ${ORDER}`,
  sec: (docs) => `SELECT c.cik, c.ticker, c.title, coalesce(d.recent_filings, []) AS recent_filings
      FROM ranked r JOIN ${docs} d ON d.doc = r.doc JOIN sec_companies c ON c.ticker = d.ticker
      ${ORDER}`,
};

/** The page's rows, best first, for the documents the ranking chose (given as one INTEGER[] parameter). */
export function pageQuery(source: StoredLookupSource, docs: readonly number[]): LookupQuery {
  return { sql: `WITH ranked AS (SELECT unnest($1::INTEGER[]) AS doc) ${PAGES[source](searchTable(source, 'docs'))}`, docs };
}
