/**
 * Keyword lookups of the stored sources, as our own parameterised SQL (never user SQL, so the
 * textual validator does not apply: "Drop City" is a fine book title). Every word of the keywords
 * must appear in one of the source's searchable texts, case-insensitively. `total` counts all
 * matches; `results` is one page.
 *
 * The result shapes are documented in the README ("Lookup results") and pinned by tests.
 */
export interface LookupQuery {
  readonly sql: string;
  readonly params: (string | number)[];
}

import type { STORED_SOURCES } from '@uda/shared/runner-contract';

export type StoredLookupSource = (typeof STORED_SOURCES)[number];

const MAX_WORDS = 8;

/** Words of the keywords, as ILIKE patterns with `%`, `_` and `\` taken literally. */
export function wordPatterns(keywords: string): string[] {
  const words = keywords.normalize('NFKC').trim().split(/\s+/).filter(Boolean).slice(0, MAX_WORDS);
  return words.map((word) => `%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
}

/** `(a ILIKE ? OR b ILIKE ?) AND …`, one group per word. */
function everyWordIn(texts: readonly string[], patterns: readonly string[]): LookupQuery {
  const group = `(${texts.map((t) => `${t} ILIKE ? ESCAPE '\\'`).join(' OR ')})`;
  return {
    sql: patterns.map(() => group).join(' AND '),
    params: patterns.flatMap((p) => texts.map(() => p)),
  };
}

type Builder = (patterns: string[], keywords: string, limit: number) => LookupQuery;

const BUILDERS: Record<StoredLookupSource, Builder> = {
  gutenberg(patterns, _keywords, limit) {
    const where = everyWordIn(['title', 'author_names', "array_to_string(subjects, '; ')", "array_to_string(bookshelves, '; ')"], patterns);
    return {
      sql: `WITH books AS (
          SELECT *, array_to_string(list_transform(authors, lambda a: a.name), '; ') AS author_names FROM gutenberg)
        SELECT text_id, title, type, issued, languages, authors, subjects, bookshelves,
               'https://www.gutenberg.org/ebooks/' || text_id AS url, count(*) OVER () AS total
        FROM books WHERE ${where.sql}
        ORDER BY (${patterns.map(() => "title ILIKE ? ESCAPE '\\'").join(' AND ')}) DESC, text_id
        LIMIT ?`,
      params: [...where.params, ...patterns, limit],
    };
  },
  census(patterns, _keywords, limit) {
    const where = everyWordIn(['place'], patterns);
    return {
      sql: `WITH places AS (
          SELECT CASE sumlev WHEN '010' THEN 'nation' WHEN '020' THEN 'region' WHEN '030' THEN 'division' ELSE 'state' END AS level,
                 name AS place, name, state AS state_fips, NULL::VARCHAR AS county_fips,
                 popestimate2023 AS population, 2023 AS year, popestimate2020 AS population_2020
          FROM census_states
          UNION ALL
          SELECT 'county', ctyname || ', ' || stname, ctyname || ', ' || stname, state, county,
                 popestimate2019, 2019, popestimate2010
          FROM census_counties WHERE sumlev = '050')
        SELECT level, name, state_fips, county_fips, population, year, population_2020 AS earliest_population,
               count(*) OVER () AS total
        FROM places WHERE ${where.sql}
        ORDER BY population DESC NULLS LAST, name
        LIMIT ?`,
      params: [...where.params, limit],
    };
  },
  food(patterns, _keywords, limit) {
    const where = everyWordIn(['f.description', 'f.category'], patterns);
    return {
      sql: `SELECT f.fdc_id, f.description, f.category, f.ndb_number,
               max(n.amount) FILTER (WHERE n.nutrient_id = 1008) AS energy_kcal,
               max(n.amount) FILTER (WHERE n.nutrient_id = 1003) AS protein_g,
               max(n.amount) FILTER (WHERE n.nutrient_id = 1004) AS fat_g,
               max(n.amount) FILTER (WHERE n.nutrient_id = 1005) AS carbohydrate_g,
               count(*) OVER () AS total
        FROM food f LEFT JOIN food_nutrients n ON n.fdc_id = f.fdc_id AND n.nutrient_id IN (1003, 1004, 1005, 1008)
        WHERE ${where.sql}
        GROUP BY f.fdc_id, f.description, f.category, f.ndb_number
        ORDER BY length(f.description), f.fdc_id
        LIMIT ?`,
      params: [...where.params, limit],
    };
  },
  pwc(patterns, keywords, limit) {
    const where = everyWordIn(['p.title', 'p.abstract', "array_to_string(p.authors, '; ')", "array_to_string(p.tasks, '; ')"], patterns);
    return {
      sql: `SELECT p.paper_url, p.arxiv_id, p.title, p.abstract, p.authors, p.tasks, p.date, p.url_abs, p.url_pdf,
               (SELECT coalesce(list({'repo_url': l.repo_url, 'is_official': l.is_official, 'framework': l.framework}
                                     ORDER BY l.is_official DESC, l.repo_url), [])
                FROM pwc_links l WHERE l.paper_url = p.paper_url) AS repositories,
               count(*) OVER () AS total
        FROM pwc_papers p
        WHERE p.arxiv_id = ? OR (${where.sql})
        ORDER BY p.date DESC NULLS LAST, p.paper_url
        LIMIT ?`,
      params: [keywords.trim(), ...where.params, limit],
    };
  },
  sec(patterns, keywords, limit) {
    const where = everyWordIn(['c.title'], patterns);
    const ticker = keywords.trim().toUpperCase();
    return {
      sql: `SELECT c.cik, c.ticker, c.title,
               (SELECT coalesce(list({'form_type': f.form_type, 'date_filed': f.date_filed, 'accession_number': f.accession_number}
                                     ORDER BY f.date_filed DESC, f.accession_number)[1:5], [])
                FROM sec_filings f WHERE f.cik = c.cik) AS recent_filings,
               count(*) OVER () AS total
        FROM sec_companies c
        WHERE upper(c.ticker) = ? OR (${where.sql})
        ORDER BY (upper(c.ticker) = ?) DESC, length(c.title), c.ticker
        LIMIT ?`,
      params: [ticker, ...where.params, ticker, limit],
    };
  },
};

/** Undefined when the keywords hold no word to search for. */
export function storedLookupQuery(source: StoredLookupSource, keywords: string, limit: number): LookupQuery | undefined {
  const patterns = wordPatterns(keywords);
  if (patterns.length === 0) return undefined;
  return BUILDERS[source](patterns, keywords, limit);
}
