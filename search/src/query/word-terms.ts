/**
 * The dictionary terms one query word matches, as the FORGIVING rules allow: its own term, the
 * terms it starts when it is the word still being typed ("frankenst" finds "Frankenstein", at
 * PREFIX_WEIGHT in BM25), the terms with its Porter2 stem ("eggs" finds "Egg"), and the terms
 * within its typo budget with their stems. A frequent word's terms are kept per index, so its typo
 * walk and stem look-up are done once per version (the index is immutable, so an entry never goes stale).
 */
import { equalRange, prefixRange, textAt, textLength } from '../index/sorted-texts.ts';
import { postingCount, type SourceIndex } from '../index/source-index.ts';
import { stemOf } from '../vocabulary/stems.ts';
import { MAX_TYPO_TERMS, PREFIX_WEIGHT, typoBudget, type MatchRules } from './terms.ts';
import { typoMatches } from './typos.ts';

/** How a term matches a word: 0 its form or a prefix, 1 its stem, 1 + n with n typos. */
export const FORM = 0;
export const STEM = 1;
export const typosOf = (cls: number): number => (cls > STEM ? cls - STEM : 0);

/**
 * The terms one query word matches, in dictionary order, with what each counts: its BM25 weight,
 * its class (FORM, STEM, 1 + typos), and whether it is a whole word (not a prefix only).
 */
export interface WordTerms {
  readonly terms: Int32Array;
  readonly weights: Float64Array;
  readonly classes: Uint8Array;
  readonly wholes: Uint8Array;
  readonly postings: number;
  /** The word's stem as compared with the stemmed titles (the closest form's, for a typo). */
  readonly stem: string;
}

/** The terms with the stem `stem`. */
function stemTerms(index: SourceIndex, stem: string): Int32Array {
  const [first, end] = equalRange(index.stems, Buffer.from(stem, 'utf8'));
  if (first === end) return new Int32Array(0);
  return index.stemTerms.subarray(first === 0 ? 0 : index.stemEnds[first - 1]!, index.stemEnds[first]!);
}

export const hasDigit = (text: string): boolean => /\p{N}/u.test(text);

interface WordCache {
  readonly entries: Map<string, WordTerms>;
  terms: number;
}

/** Bounded by the terms held: the oldest entries go first beyond CACHED_TERMS. */
const CACHED_TERMS = 1 << 20;
const wordCaches = new WeakMap<SourceIndex, WordCache>();

/** What `word` matches under `rules`; `prefix`: it is the word still being typed. */
export function wordTerms(index: SourceIndex, word: string, rules: MatchRules, checkDeadline: () => void, prefix: boolean): WordTerms {
  let cache = wordCaches.get(index);
  if (!cache) wordCaches.set(index, (cache = { entries: new Map(), terms: 0 }));
  const key = `${+rules.stems}${+rules.typos}${+prefix}${word}`;
  const known = cache.entries.get(key);
  if (known) return known;
  const computed = computeWordTerms(index, word, rules, checkDeadline, prefix);
  if (computed.terms.length <= CACHED_TERMS) {
    cache.entries.set(key, computed);
    cache.terms += computed.terms.length;
    for (const [oldest, entry] of cache.entries) {
      if (cache.terms <= CACHED_TERMS) break;
      cache.entries.delete(oldest);
      cache.terms -= entry.terms.length;
    }
  }
  return computed;
}

/** What one word matches: its form (and prefixes), then (by the rules) its stem's terms and its typos' terms and stems. */
function computeWordTerms(index: SourceIndex, word: string, rules: MatchRules, checkDeadline: () => void, prefix: boolean): WordTerms {
  const key = Buffer.from(word, 'utf8');
  const [first, end] = prefix ? prefixRange(index.terms, key) : equalRange(index.terms, key);
  const exact = first < end && textLength(index.terms, first) === key.length ? first : -1;
  // term → [weight, class, whole]
  const found = new Map<number, [number, number, number]>();
  for (let t = first; t < end; t++) found.set(t, t === exact ? [1, FORM, 1] : [PREFIX_WEIGHT, FORM, 0]);
  const stem = stemOf(word);
  if (rules.stems) {
    for (const t of stemTerms(index, stem)) if (t !== exact) found.set(t, [1, STEM, 1]);
  }
  const direct = found.size;
  // An id typed exactly (a ticker) gets no typos: a typo of it would be another id.
  const closest = rules.typos && !(exact >= 0 && index.idTerms[exact]) ? addTypos(index, word, found, checkDeadline) : undefined;
  const terms = Int32Array.from([...found.keys()].sort((a, b) => a - b));
  const weights = Float64Array.from(terms, (t) => found.get(t)![0]);
  const classes = Uint8Array.from(terms, (t) => found.get(t)![1]);
  const wholes = Uint8Array.from(terms, (t) => found.get(t)![2]);
  let postings = 0;
  for (const t of terms) postings += postingCount(index, t);
  return { terms, weights, classes, wholes, postings, stem: direct > 0 ? stem : (closest ?? stem) };
}

/**
 * Adds the terms within the word's typo budget (never terms with digits or found only in id fields:
 * numbers, tickers and ids are typed exactly), with their stems' terms, at most MAX_TYPO_TERMS of
 * them, the fewest typos and most documents first. Returns the stem of the closest one.
 */
function addTypos(index: SourceIndex, word: string, found: Map<number, [number, number, number]>, checkDeadline: () => void): string | undefined {
  const candidates = typoMatches(index.terms, word, typoBudget(word), checkDeadline)
    .filter((m) => !found.has(m.term) && !index.idTerms[m.term] && !hasDigit(textAt(index.terms, m.term)))
    .sort((a, b) => a.typos - b.typos || postingCount(index, b.term) - postingCount(index, a.term))
    .slice(0, MAX_TYPO_TERMS);
  for (const { term, typos } of candidates) {
    const cls = STEM + typos;
    for (const t of [term, ...stemTerms(index, stemOf(textAt(index.terms, term)))]) {
      const known = found.get(t);
      if (!known || known[1] > cls) found.set(t, [1, cls, 1]);
    }
  }
  return candidates[0] ? stemOf(textAt(index.terms, candidates[0].term)) : undefined;
}
