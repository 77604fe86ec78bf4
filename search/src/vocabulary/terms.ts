/**
 * The search index's vocabulary, shared by the exporter (which builds the index in DuckDB SQL) and
 * the query-runner (which splits the keywords the same way in TypeScript). A term is a run of
 * letters and digits, lower-cased, with accents stripped: "Doña Ana" → `dona`, `ana`. An apostrophe
 * (' or ’) joins what it separates instead of splitting it: "McDonald's" is `mcdonalds`, as people
 * type it with or without the apostrophe.
 *
 * The two forms must agree, or a query term never meets its postings; `index/tables.test.ts`
 * compares them on the same strings through DuckDB.
 */

/** Removed before splitting, so they join the letters around them (the SQL form doubles the quote). */
const APOSTROPHES = /['\u2019]/g;
const APOSTROPHES_SQL = "''\u2019";

/** DuckDB SQL for the terms of a text expression, as a `VARCHAR[]` that may hold empty strings. */
export function searchTermsSql(expression: string): string {
  return `regexp_split_to_array(regexp_replace(strip_accents(lower(coalesce(${expression}, ''))), '[${APOSTROPHES_SQL}]', '', 'g'), '[^\\pL\\pN]+')`;
}

/** The same terms in TypeScript, empty strings removed, in text order (duplicates kept). */
export function searchTerms(text: string): string[] {
  return text
    .toLowerCase()
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(APOSTROPHES, '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((term) => term !== '');
}
