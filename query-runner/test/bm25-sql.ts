/**
 * The stored lookups' ranking as one DuckDB SQL query over the index tables: the runner's first
 * implementation, kept as the reference the in-memory ranking (`@uda/search/rank`) is compared
 * with on random queries (`rank.agrees.test.ts`). It states the rules declaratively: a term's
 * postings are the range `[term, term ‖ U+10FFFF]` of the sorted `term` column (a whole term
 * for the last word typed, a whole term for the others), summed per document; every term must
 * match; the tiers, then the fewest words outside the primary fields, then BM25.
 */
import { searchTable } from '@uda/search/index';
import { K1, matchesAsPrefix, parseQuery, PREFIX_WEIGHT, titlePhrase } from '@uda/search/query';

export interface ReferenceQuery {
  readonly sql: string;
  readonly params: (string | number)[];
}

/** Sorts after every character (and is no letter or digit), so `[term, term + MAX_CHAR]` is every term that starts with `term`. */
const MAX_CHAR = '\u{10FFFF}';

/** One query term's postings, summed per document: `(i, doc, tf, whole, norm)`. */
function termHits(postings: string, term: string, i: number, prefix: boolean): ReferenceQuery {
  const upTo = prefix ? term + MAX_CHAR : term;
  return {
    sql: `SELECT ${i} AS i, doc,
             sum(CASE WHEN term = ? THEN tf ELSE tf * ${PREFIX_WEIGHT} END) AS tf,
             bool_or(term = ? AND in_primary) AS whole, any_value(norm) AS norm
          FROM ${postings} WHERE term >= ? AND term <= ? GROUP BY doc`,
    params: [term, term, term, upTo],
  };
}

/**
 * `(doc, tier, score, total)` of the best `limit` matches, best first; undefined without a term.
 * The tiers compare `titles(title, doc)` with `phrase`: by default the exporter's titles and the
 * keywords as terms; the runner compares stems, so its test passes both stemmed.
 */
export function referenceRankingSql(source: string, keywords: string, limit: number, titles = searchTable(source, 'titles'), phrase = titlePhrase(keywords)): ReferenceQuery | undefined {
  const query = parseQuery(keywords);
  const terms = query.words;
  if (terms.length === 0) return undefined;
  const hits = terms.map((term, i) => termHits(searchTable(source, 'postings'), term, i, matchesAsPrefix(query, term)));
  return {
    sql: `WITH hits AS (${hits.map((h) => h.sql).join(' UNION ALL ')}),
      scored AS (
        SELECT doc, bool_and(whole) AS whole, count(*) FILTER (WHERE NOT whole) AS outside,
               sum(ln(1 + (s.documents - df + 0.5) / (df + 0.5)) * tf * ${K1 + 1} / (tf + norm)) AS score
        FROM (SELECT *, count(*) OVER (PARTITION BY i) AS df FROM hits) CROSS JOIN ${searchTable(source, 'stats')} s
        GROUP BY doc HAVING count(*) = ${terms.length}),
      titled AS (
        SELECT doc, min(CASE WHEN title = ? THEN 0 ELSE 1 END) AS tier FROM ${titles}
        WHERE title >= ? AND title <= ? GROUP BY doc)
      SELECT m.doc, coalesce(t.tier, CASE WHEN m.whole THEN 2 ELSE 3 END)::INTEGER AS tier, m.outside::INTEGER AS outside, m.score, count(*) OVER () AS total
      FROM scored m LEFT JOIN titled t ON t.doc = m.doc
      ORDER BY tier, outside, score DESC, m.doc
      LIMIT ?`,
    params: [...hits.flatMap((h) => h.params), phrase, phrase, `${phrase} ${MAX_CHAR}`, limit],
  };
}
