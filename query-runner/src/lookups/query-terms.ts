/**
 * The stored lookups' matching rules, shared by the ranking (`rank.ts`) and the SQL reference it is
 * tested against (`test/bm25-sql.ts`).
 *
 * Matching: the keywords' terms (letters and digits, case and accents folded, at most MAX_TERMS)
 * must each be in a document, as a whole term or, for terms of MIN_PREFIX or more characters, as
 * the start of one ("war" finds "Warden"). A term matched only as a prefix counts PREFIX_WEIGHT of
 * a whole-term match in BM25.
 */
import { searchTerms } from '@uda/shared/search';

export const MAX_TERMS = 8;
/** Shorter terms match whole terms only: a one- or two-letter prefix would read most of the index. */
export const MIN_PREFIX = 3;
/** What a term matched only as a prefix counts, against a whole-term match. */
export const PREFIX_WEIGHT = 0.5;
/** BM25's k1; the exporter folds k1 and b into each document's `norm`. */
export const K1 = 1.2;

/** The query's distinct terms, in keyword order. */
export function queryTerms(keywords: string): string[] {
  return [...new Set(searchTerms(keywords))].slice(0, MAX_TERMS);
}

/** The text compared with titles for the exact and prefix tiers: every word, beyond MAX_TERMS too. */
export function titlePhrase(keywords: string): string {
  return searchTerms(keywords).join(' ');
}

export function matchesAsPrefix(term: string): boolean {
  return term.length >= MIN_PREFIX;
}
