/**
 * The stored lookups' matching rules, shared by the ranking (`../rank/`) and the SQL reference it is
 * tested against (`test/bm25-sql.ts`).
 *
 * Matching: the keywords' terms (letters and digits, case and accents folded, at most MAX_TERMS)
 * must each be in a document, as a whole term or, for the last word typed when it has MIN_PREFIX
 * or more characters, as the start of one ("the art of war" finds "Warden" only through its last
 * word: people type a query left to right, and only the word still being typed is unfinished). A
 * term matched only as a prefix counts PREFIX_WEIGHT of a whole-term match in BM25.
 */
import { searchTerms } from '../vocabulary/terms.ts';

export const MAX_TERMS = 8;
/** Shorter terms match whole terms only: a one- or two-letter prefix would read most of the index. */
export const MIN_PREFIX = 3;
/** What a term matched only as a prefix counts, against a whole-term match. */
export const PREFIX_WEIGHT = 0.5;
/** BM25's k1; the exporter folds k1 and b into each document's `norm`. */
export const K1 = 1.2;

/** A lookup's keywords, split into terms once on its way through the runner. */
export interface ParsedQuery {
  /** The distinct terms, in keyword order, at most MAX_TERMS: each must match. */
  readonly words: readonly string[];
  /** Every term in order, beyond MAX_TERMS too: compared with titles for the exact and prefix tiers. */
  readonly phrase: readonly string[];
  /** The last term typed, the one word that may match as a prefix (when long enough), or undefined. */
  readonly typing: string | undefined;
}

export function parseQuery(keywords: string): ParsedQuery {
  const phrase = searchTerms(keywords);
  const last = phrase.at(-1);
  return { words: [...new Set(phrase)].slice(0, MAX_TERMS), phrase, typing: last !== undefined && last.length >= MIN_PREFIX ? last : undefined };
}

/** The query's distinct terms, in keyword order. */
export function queryTerms(keywords: string): string[] {
  return [...parseQuery(keywords).words];
}

/** The text compared with titles for the exact and prefix tiers: every word, beyond MAX_TERMS too. */
export function titlePhrase(keywords: string): string {
  return searchTerms(keywords).join(' ');
}

/** Whether `word` of `query` may match the terms it starts: only the last word typed does. */
export function matchesAsPrefix(query: ParsedQuery, word: string): boolean {
  return word === query.typing;
}

/**
 * How forgiving a lookup is. Lookups use FORGIVING; AS_TYPED is the ranking before forgiveness
 * (whole terms and prefixes as typed), which the SQL reference states (`rank.agrees.test.ts`).
 */
export interface MatchRules {
  /** A word also matches the terms with its Porter2 stem ("eggs" finds "Egg"). */
  readonly stems: boolean;
  /** A word also matches the terms within its typo budget (`typoBudget`). */
  readonly typos: boolean;
  /** Two adjacent words also match their concatenation, and one word a split into two terms. */
  readonly splits: boolean;
  /** When nothing holds every word, words are dropped from the last one back. */
  readonly dropWords: boolean;
}

export const FORGIVING: MatchRules = { stems: true, typos: true, splits: true, dropWords: true };
export const AS_TYPED: MatchRules = { stems: false, typos: false, splits: false, dropWords: false };

/**
 * Typos a word may have, as Meilisearch allows them: none below 5 characters, one from 5, two from
 * 9. None for a word with a digit (a number, a ticker class, an arXiv id).
 */
export function typoBudget(word: string): number {
  if (/\p{N}/u.test(word)) return 0;
  const length = [...word].length;
  return length >= 9 ? 2 : length >= 5 ? 1 : 0;
}

/** At most this many typo terms per word, the fewest typos and most documents first. */
export const MAX_TYPO_TERMS = 24;

/**
 * English stop words: a query is never reduced to these alone when words are dropped, so "the" or
 * "of" left over from a longer query never matches nearly every document.
 */
const STOP_WORDS = new Set(
  'a an and are as at be but by for from has have he her his i if in into is it its of on or our she so than that the their them then there these they this to was we were what when which who will with you your'.split(' '),
);

export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word);
}
