/**
 * Keyword lookups of the stored sources, as our own parameterised SQL (never user SQL, so the
 * textual validator does not apply: "Drop City" is a fine book title). Every word of the keywords
 * must appear in one of the source's searchable texts, case-insensitively. `total` counts all
 * matches; `results` is one page.
 *
 * Ranking: exact and whole-word prefix matches of the source's main texts first (see `rankOf`).
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

/** Keywords as one phrase: NFKC, single spaces, trimmed (what exact and prefix matches compare). */
export function phraseOf(keywords: string): string {
  return keywords.normalize('NFKC').trim().replace(/\s+/g, ' ');
}

/** Letters and digits only, lower-case, single spaces: the form whole-word matches compare. */
export function wordsOf(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
}

/**
 * A text in the same form, padded with spaces, so `LIKE '% word %'` is a whole-word test. The
 * pattern is a constant, so DuckDB compiles it once per query (a parameterised RE2 pattern would be
 * compiled per row). It is computed once per matched row, in a projection, and compared after.
 */
const padded = (t: string) => `(' ' || trim(regexp_replace(lower(${t}), '[^\\pL\\pN]+', ' ', 'g')) || ' ')`;

interface Primary {
  /** The text as it is. */
  text: string;
  /** The column holding its `padded` form. */
  words: string;
}

/**
 * The rank of a match, best first: 0 a primary text equals the keywords (case-insensitively); 1 it
 * starts with them as whole words; 2 every word is a whole word of the primary texts; 3 every word
 * is in them at all ("war" in "Warden"); 4 the match came from the other searched columns.
 * `fts` is not available offline, so this is plain comparisons over the few matched rows.
 */
function rankOf(primary: readonly Primary[], phrase: string, patterns: readonly string[]): LookupQuery {
  const normal = wordsOf(phrase);
  const words = normal.split(' ').filter(Boolean).slice(0, MAX_WORDS);
  const anyOf = (test: (p: Primary) => string) => `(${primary.map(test).join(' OR ')})`;
  // No letters or digits at all (e.g. "%"): nothing can be a whole-word match.
  const wholeWord = words.length ? words.map(() => anyOf((p) => `${p.words} LIKE ?`)).join(' AND ') : 'false';
  const substring = everyWordIn(
    primary.map((p) => p.text),
    patterns,
  );
  return {
    sql: `CASE WHEN ${anyOf((p) => `lower(${p.text}) = ?`)} THEN 0
               WHEN ${anyOf((p) => `${p.words} LIKE ?`)} THEN 1
               WHEN ${wholeWord} THEN 2
               WHEN ${substring.sql} THEN 3 ELSE 4 END`,
    params: [
      ...primary.map(() => phrase.toLowerCase()),
      ...primary.map(() => (normal ? ` ${normal} %` : '')),
      ...words.flatMap((word) => primary.map(() => `% ${word} %`)),
      ...substring.params,
    ],
  };
}

interface Matched {
  /** `SELECT … WHERE …`: every match, with the page's columns, `total` and the primary texts. */
  sql: string;
  params: (string | number)[];
  /** Output columns of `sql` that the rank compares. */
  primary: readonly string[];
  /** Output columns of `sql` that are not part of the result. */
  hidden: readonly string[];
  /** Order among matches of the same rank. */
  ties: string;
}

/** One page of `matched`, best rank first. */
function ranked(matched: Matched, keywords: string, patterns: readonly string[], limit: number): LookupQuery {
  const primary = matched.primary.map((text, i) => ({ text, words: `_words_${i}` }));
  const rank = rankOf(primary, phraseOf(keywords), patterns);
  const hidden = [...matched.hidden, ...primary.map((p) => p.words)];
  return {
    sql: `WITH matched AS (${matched.sql}),
        worded AS (SELECT *, ${primary.map((p) => `${padded(p.text)} AS ${p.words}`).join(', ')} FROM matched)
      SELECT * EXCLUDE (${hidden.join(', ')}) FROM worded
      ORDER BY ${rank.sql}, ${matched.ties}
      LIMIT ?`,
    params: [...matched.params, ...rank.params, limit],
  };
}

type Builder = (patterns: string[], keywords: string) => Matched;

const BUILDERS: Record<StoredLookupSource, Builder> = {
  gutenberg(patterns) {
    const where = everyWordIn(['title', 'author_names', "array_to_string(subjects, '; ')", "array_to_string(bookshelves, '; ')"], patterns);
    return {
      sql: `WITH books AS (
          SELECT *, array_to_string(list_transform(authors, lambda a: a.name), '; ') AS author_names FROM gutenberg)
        SELECT text_id, title, type, issued, languages, authors, subjects, bookshelves,
               'https://www.gutenberg.org/ebooks/' || text_id AS url, author_names, count(*) OVER () AS total
        FROM books WHERE ${where.sql}`,
      params: where.params,
      primary: ['title', 'author_names'],
      hidden: ['author_names'],
      ties: 'text_id',
    };
  },
  census(patterns) {
    const where = everyWordIn(['place'], patterns);
    // `short` is the state or county name alone ("York County"), so it can match exactly or as a prefix.
    return {
      sql: `WITH places AS (
          SELECT CASE sumlev WHEN '010' THEN 'nation' WHEN '020' THEN 'region' WHEN '030' THEN 'division' ELSE 'state' END AS level,
                 name AS place, name, name AS short, state AS state_fips, NULL::VARCHAR AS county_fips,
                 popestimate2023 AS population, 2023 AS year, popestimate2020 AS population_2020
          FROM census_states
          UNION ALL
          SELECT 'county', ctyname || ', ' || stname, ctyname || ', ' || stname, ctyname, state, county,
                 popestimate2019, 2019, popestimate2010
          FROM census_counties WHERE sumlev = '050')
        SELECT level, name, state_fips, county_fips, population, year, population_2020 AS earliest_population, short,
               count(*) OVER () AS total
        FROM places WHERE ${where.sql}`,
      params: where.params,
      primary: ['short', 'name'],
      hidden: ['short'],
      ties: 'population DESC NULLS LAST, name',
    };
  },
  food(patterns) {
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
        GROUP BY f.fdc_id, f.description, f.category, f.ndb_number`,
      params: where.params,
      primary: ['description'],
      hidden: [],
      ties: 'length(description), fdc_id',
    };
  },
  pwc(patterns, keywords) {
    const where = everyWordIn(['p.title', 'p.abstract', "array_to_string(p.authors, '; ')", "array_to_string(p.tasks, '; ')"], patterns);
    // An exact arXiv id ranks 0 through the primary texts as well.
    return {
      sql: `SELECT p.paper_url, p.arxiv_id, p.title, p.abstract, p.authors, p.tasks, p.date, p.url_abs, p.url_pdf,
               (SELECT coalesce(list({'repo_url': l.repo_url, 'is_official': l.is_official, 'framework': l.framework}
                                     ORDER BY l.is_official DESC, l.repo_url), [])
                FROM pwc_links l WHERE l.paper_url = p.paper_url) AS repositories,
               count(*) OVER () AS total
        FROM pwc_papers p
        WHERE p.arxiv_id = ? OR (${where.sql})`,
      params: [keywords.trim(), ...where.params],
      primary: ['title', 'arxiv_id'],
      hidden: [],
      ties: 'date DESC NULLS LAST, paper_url',
    };
  },
  sec(patterns, keywords) {
    const where = everyWordIn(['c.title'], patterns);
    // An exact ticker ranks 0 through the primary texts as well.
    return {
      sql: `SELECT c.cik, c.ticker, c.title,
               (SELECT coalesce(list({'form_type': f.form_type, 'date_filed': f.date_filed, 'accession_number': f.accession_number}
                                     ORDER BY f.date_filed DESC, f.accession_number)[1:5], [])
                FROM sec_filings f WHERE f.cik = c.cik) AS recent_filings,
               count(*) OVER () AS total
        FROM sec_companies c
        WHERE upper(c.ticker) = ? OR (${where.sql})`,
      params: [keywords.trim().toUpperCase(), ...where.params],
      primary: ['title', 'ticker'],
      hidden: [],
      ties: 'length(title), ticker',
    };
  },
};

/** Undefined when the keywords hold no word to search for. */
export function storedLookupQuery(source: StoredLookupSource, keywords: string, limit: number): LookupQuery | undefined {
  const patterns = wordPatterns(keywords);
  if (patterns.length === 0) return undefined;
  return ranked(BUILDERS[source](patterns, keywords), keywords, patterns, limit);
}
