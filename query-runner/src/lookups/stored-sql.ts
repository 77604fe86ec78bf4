/**
 * Keyword lookups of the stored sources, as our own parameterised SQL (never user SQL, so the
 * textual validator does not apply: "Drop City" is a fine book title), over the search index the
 * exporter builds (`exporter/src/build/search-index.ts`).
 *
 * Matching: the keywords' terms (letters and digits, case and accents folded, at most 8) must each
 * be in a document, as a whole term or, for terms of 3 or more characters, as the start of one
 * ("war" finds "Warden"). `total` counts every matching document exactly; `results` is one page.
 *
 * Ranking, best first: 0 a primary text (a title, an author, a company name, a ticker, an arXiv id)
 * equals the keywords; 1 it starts with them as whole words; 2 every term is a whole word of the
 * primary fields; 3 the rest. Within a tier by BM25 (field-weighted; a prefix-only match counts half),
 * then in the source's tie order. Only the posting lists of the query's terms and the title range of
 * the keywords are read; `docs` and the source tables are read by key for the page's rows only.
 * The result shapes are documented in the README ("Lookup results") and pinned by tests.
 */
import type { STORED_SOURCES } from '@uda/shared/runner-contract';
import { searchTable, searchTerms } from '@uda/shared/search';

export interface LookupQuery {
  readonly sql: string;
  readonly params: (string | number)[];
}

export type StoredLookupSource = (typeof STORED_SOURCES)[number];

const MAX_TERMS = 8;
/** Shorter terms match whole terms only: a one- or two-letter prefix would read most of the index. */
const MIN_PREFIX = 3;
/** What a term matched only as a prefix counts, against a whole-term match. */
const PREFIX_WEIGHT = 0.5;
/** Sorts after every character (and is no letter or digit), so `[term, term + MAX_CHAR]` is every term that starts with `term`. */
const MAX_CHAR = '\u{10FFFF}';
const K1 = 1.2;

/** The query's distinct terms, in keyword order. */
export function queryTerms(keywords: string): string[] {
  return [...new Set(searchTerms(keywords))].slice(0, MAX_TERMS);
}

/**
 * One query term's postings, summed per document: `(i, doc, tf, whole, norm)`. The SQL text is the
 * same for a whole term and a prefix (only the range's upper bound differs), so the runner prepares
 * one statement per source and number of terms.
 */
function termHits(postings: string, term: string, i: number): LookupQuery {
  const upTo = term.length >= MIN_PREFIX ? term + MAX_CHAR : term;
  return {
    sql: `SELECT ${i} AS i, doc,
             sum(CASE WHEN term = ? THEN tf ELSE tf * ${PREFIX_WEIGHT} END) AS tf,
             bool_or(term = ? AND in_primary) AS whole, any_value(norm) AS norm
          FROM ${postings} WHERE term >= ? AND term <= ? GROUP BY doc`,
    params: [term, term, term, upTo],
  };
}

/**
 * `ranked(doc, tier, score, total)`: the page of matching documents, best first. Every term's
 * postings are read through a constant range on the sorted `term` column, which DuckDB prunes
 * with the row groups' min/max statistics.
 */
function rankedDocs(source: StoredLookupSource, keywords: string, terms: readonly string[], limit: number): LookupQuery {
  const postings = searchTable(source, 'postings');
  const titles = searchTable(source, 'titles');
  const hits = terms.map((term, i) => termHits(postings, term, i));
  // Exact and prefix matches compare every word of the keywords, beyond the first 8 terms too.
  const phrase = searchTerms(keywords).join(' ');
  return {
    sql: `hits AS (${hits.map((h) => h.sql).join(' UNION ALL ')}),
      scored AS (
        SELECT doc, bool_and(whole) AS whole,
               sum(ln(1 + (s.documents - df + 0.5) / (df + 0.5)) * tf * ${K1 + 1} / (tf + norm)) AS score
        FROM (SELECT *, count(*) OVER (PARTITION BY i) AS df FROM hits) CROSS JOIN ${searchTable(source, 'stats')} s
        GROUP BY doc HAVING count(*) = ${terms.length}),
      titled AS (
        SELECT doc, min(CASE WHEN title = ? THEN 0 ELSE 1 END) AS tier FROM ${titles}
        WHERE title >= ? AND title <= ? GROUP BY doc),
      ranked AS (
        SELECT m.doc, coalesce(t.tier, CASE WHEN m.whole THEN 2 ELSE 3 END) AS tier, m.score, count(*) OVER () AS total
        FROM scored m LEFT JOIN titled t ON t.doc = m.doc
        ORDER BY tier, score DESC, m.doc
        LIMIT ?)`,
    params: [...hits.flatMap((h) => h.params), phrase, phrase, `${phrase} ${MAX_CHAR}`, limit],
  };
}

/**
 * The page's columns for the ranked documents: `page` must select from `ranked r JOIN docs d`. The
 * columns from the source's other tables (nutrients, repositories, filings) are the index's page
 * columns in `docs`, so a page reads the source tables by key for its own rows only.
 */
type PageSql = (docs: string) => string;

const ORDER = 'ORDER BY r.tier, r.score DESC, r.doc';

const PAGES: Record<StoredLookupSource, PageSql> = {
  gutenberg: (docs) => `SELECT g.text_id, g.title, g.type, g.issued, g.languages, g.authors, g.subjects, g.bookshelves,
         'https://www.gutenberg.org/ebooks/' || g.text_id AS url, r.total
      FROM ranked r JOIN ${docs} d ON d.doc = r.doc JOIN gutenberg g ON g.text_id = d.text_id
      ${ORDER}`,
  census: (docs) => `SELECT p.level, p.name, p.state_fips, p.county_fips, p.population, p.year, p.earliest_population, r.total
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
         d.energy_kcal, d.protein_g, d.fat_g, d.carbohydrate_g, r.total
      FROM ranked r JOIN ${docs} d ON d.doc = r.doc JOIN food f ON f.fdc_id = d.fdc_id
      ${ORDER}`,
  pwc: (docs) => `SELECT p.paper_url, p.arxiv_id, p.title, p.abstract, p.authors, p.tasks, p.date, p.url_abs, p.url_pdf,
         coalesce(d.repositories, []) AS repositories, r.total
      FROM ranked r JOIN ${docs} d ON d.doc = r.doc JOIN pwc_papers p ON p.paper_url = d.paper_url
      ${ORDER}`,
  sec: (docs) => `SELECT c.cik, c.ticker, c.title, coalesce(d.recent_filings, []) AS recent_filings, r.total
      FROM ranked r JOIN ${docs} d ON d.doc = r.doc JOIN sec_companies c ON c.ticker = d.ticker
      ${ORDER}`,
};

/** Undefined when the keywords hold no term to search for (no letter or digit). */
export function storedLookupQuery(source: StoredLookupSource, keywords: string, limit: number): LookupQuery | undefined {
  const terms = queryTerms(keywords);
  if (terms.length === 0) return undefined;
  const ranked = rankedDocs(source, keywords, terms, limit);
  return { sql: `WITH ${ranked.sql} ${PAGES[source](searchTable(source, 'docs'))}`, params: ranked.params };
}
