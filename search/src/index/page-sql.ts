/**
 * The rows of a stored lookup's page, as our own SQL (never user SQL): the columns each document
 * shows, read by key from the index's `docs` table and the source tables. `pages.ts` renders them
 * for every document into the version's page files; the runner's ranking picks the page's documents. The result shapes are documented in the README ("Lookup
 * results") and pinned by tests.
 */
import type { STORED_SOURCES } from '@uda/shared/runner-contract';
import { searchTable } from './table-names.ts';

export type StoredLookupSource = (typeof STORED_SOURCES)[number];

/**
 * The page's columns for the documents of a `ranked(doc)` relation, selected from `ranked r JOIN
 * docs d` with `r.doc` as PAGE_DOC. The columns from the source's other tables (nutrients,
 * repositories, filings) are the index's page columns in `docs`, computed at export.
 */
type PageSql = (docs: string) => string;

/** The document number each row carries, which is not part of the row's shape. */
export const PAGE_DOC = 'page_doc';

const PAGES: Record<StoredLookupSource, PageSql> = {
  gutenberg: (docs) => `SELECT r.doc AS ${PAGE_DOC}, g.text_id, g.title, g.type, g.issued, g.languages, g.authors, g.subjects, g.bookshelves,
         'https://www.gutenberg.org/ebooks/' || g.text_id AS url
      FROM ranked r JOIN ${docs} d ON d.doc = r.doc JOIN gutenberg g ON g.text_id = d.text_id`,
  census: (docs) => `SELECT r.doc AS ${PAGE_DOC}, p.level, p.name, p.state_fips, p.county_fips, p.population, p.year, p.earliest_population
      FROM ranked r JOIN ${docs} d ON d.doc = r.doc JOIN (
          SELECT CASE sumlev WHEN '010' THEN 'nation' WHEN '020' THEN 'region' WHEN '030' THEN 'division' ELSE 'state' END AS level,
                 name, state AS state_fips, NULL::VARCHAR AS county_fips,
                 popestimate2023 AS population, 2023 AS year, popestimate2020 AS earliest_population
          FROM census_states
          UNION ALL
          SELECT 'county', ctyname || ', ' || stname, state, county, popestimate2019, 2019, popestimate2010
          FROM census_counties WHERE sumlev = '050') p ON p.name = d.name`,
  food: (docs) => `SELECT r.doc AS ${PAGE_DOC}, f.fdc_id, f.description, f.category, f.ndb_number,
         d.energy_kcal, d.protein_g, d.fat_g, d.carbohydrate_g
      FROM ranked r JOIN ${docs} d ON d.doc = r.doc JOIN food f ON f.fdc_id = d.fdc_id`,
  pwc: (docs) => `SELECT r.doc AS ${PAGE_DOC}, p.paper_url, p.arxiv_id, p.title, p.abstract, p.authors, p.tasks, p.date, p.url_abs, p.url_pdf,
         coalesce(d.repositories, []) AS repositories
      FROM ranked r JOIN ${docs} d ON d.doc = r.doc JOIN pwc_papers p ON p.paper_url = d.paper_url`,
  // One row per company: `ticker` is its main class, `tickers` every class (the index's docs hold both).
  sec: (docs) => `SELECT r.doc AS ${PAGE_DOC}, d.cik, d.ticker, d.tickers, d.title, coalesce(d.recent_filings, []) AS recent_filings
      FROM ranked r JOIN ${docs} d ON d.doc = r.doc`,
};

/** The page SQL of `source`, for the documents of a `ranked(doc)` relation the caller defines. */
export function pageSql(source: StoredLookupSource): string {
  return PAGES[source](searchTable(source, 'docs'));
}
