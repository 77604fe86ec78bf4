/**
 * Ranks a stored lookup over the in-memory index (`search-index.ts`), reading only the postings of
 * the terms the query's words match: the work follows the number of those postings, not the table size.
 *
 * Matching (FORGIVING rules; AS_TYPED keeps only the first): each word matches
 *   - its own term, and for words of MIN_PREFIX or more characters the terms it starts
 *     ("war" finds "Warden", at PREFIX_WEIGHT in BM25);
 *   - the terms with its Porter2 stem ("eggs" finds "Egg");
 *   - the terms within its typo budget (`typoBudget`), and their stems;
 * every word must match. Two adjacent words also match their concatenation ("jp morgan" finds
 * JPMORGAN), and a word absent from the dictionary matches a split into two terms that are there
 * ("cocacola" finds "Coca-Cola", counted as one typo). Typos and splits are looked for only when the
 * answers without them do not fill the page (`rankBuckets`). When no document holds every word, the stop
 * words are dropped, then words from the last one back, never down to stop words alone.
 *
 * Ranking, best first (the guide states these rules in this order):
 *   1. fewer typos (a word's typos are those of the closest form the document holds);
 *   2. the tier: 0, a primary text (a title, an author, a company name, a ticker, an arXiv id)
 *      equals the words (compared stem by stem); 1, it starts with them as whole words; 2, every
 *      word is a whole word of the primary fields; 3, the rest;
 *   3. fewer words matched only by stem (the exact form first);
 *   4. BM25 (field-weighted);
 *   5. `doc`, the source's tie order.
 * `total` counts every document matched by the words kept, exactly.
 *
 * Each word's postings are summed per document in dense per-source scratch arrays stamped per pass
 * (no clearing between lookups). The ranking is synchronous, so lookups never share the scratch
 * concurrently; `checkDeadline` is called between blocks of postings, so the query deadline bounds
 * the work.
 */
import { AS_TYPED, FORGIVING, isStopWord, K1, MAX_TYPO_TERMS, matchesAsPrefix, PREFIX_WEIGHT, queryTerms, typoBudget, type MatchRules } from './query-terms.ts';
import { equalRange, lowerBound, prefixRange, stemOf, textAt, textLength, type SourceIndex } from '@uda/shared/search-index';
import { typoMatches } from './typos.ts';
import { searchTerms } from '@uda/shared/search';

export { AS_TYPED, FORGIVING };

export interface RankedDoc {
  readonly doc: number;
  readonly typos: number;
  readonly tier: number;
  /** Words matched only by stem. */
  readonly stems: number;
  readonly score: number;
}

export interface Ranking {
  readonly total: number;
  /** The page, best first. */
  readonly docs: readonly RankedDoc[];
}

/** Postings summed between two deadline checks: well under a millisecond of work. */
const BLOCK = 1 << 16;
const NO_MATCH: Ranking = { total: 0, docs: [] };
const AFTER_EVERY_CONTINUATION = 0xff;

/** How a term matches a word: 0 its form or a prefix, 1 its stem, 1 + n with n typos. */
const FORM = 0;
const STEM = 1;
const NONE = 255;

/**
 * The dictionary terms one query word matches, in dictionary order, with what each counts: its BM25
 * weight, its class (FORM, STEM, 1 + typos), and whether it is a whole word (not a prefix only).
 */
interface WordTerms {
  readonly terms: Int32Array;
  readonly weights: Float64Array;
  readonly classes: Uint8Array;
  readonly wholes: Uint8Array;
  readonly postings: number;
  /** The word's stem as compared with the stemmed titles (the closest form's, for a typo). */
  readonly stem: string;
}

/** One reading of the query: its words' terms, the typos the reading itself costs, and the title phrase. */
interface Reading {
  readonly words: readonly WordTerms[];
  readonly typos: number;
  readonly phrase: string;
}

/**
 * Per document: `seen[doc] === stamp` marks the documents of the current pass, whose `tf`, `flag`
 * and `cls` are set. Bit sets of every document (a few hundred KB, so they stay in the CPU's cache
 * where the Int32 stamps do not) count a long word's documents, test its postings against the
 * candidates, and mark the titled documents.
 */
interface Scratch {
  stamp: number;
  readonly seen: Int32Array;
  readonly tf: Float64Array;
  readonly flag: Uint8Array;
  readonly cls: Uint8Array;
  readonly termBits: Uint32Array;
  readonly candidateBits: Uint32Array;
  readonly titleBits: Uint32Array;
}

/** The documents still matching every word so far, with their partial scores, typos and stem-only words. */
interface Matches {
  count: number;
  readonly docs: Int32Array;
  readonly scores: Float64Array;
  readonly whole: Uint8Array;
  readonly typos: Uint8Array;
  readonly stems: Uint8Array;
}

const scratches = new WeakMap<SourceIndex, Scratch>();

function scratchOf(index: SourceIndex): Scratch {
  let scratch = scratches.get(index);
  if (!scratch) {
    const size = index.documents + 1;
    const words = (size >>> 5) + 1;
    scratch = {
      stamp: 0, seen: new Int32Array(size), tf: new Float64Array(size), flag: new Uint8Array(size), cls: new Uint8Array(size),
      termBits: new Uint32Array(words), candidateBits: new Uint32Array(words), titleBits: new Uint32Array(words),
    };
    scratches.set(index, scratch);
  }
  return scratch;
}

function nextStamp(scratch: Scratch): number {
  if (scratch.stamp === 0x7fffffff) {
    scratch.seen.fill(0);
    scratch.stamp = 0;
  }
  return ++scratch.stamp;
}

const postingStart = (index: SourceIndex, t: number) => (t === 0 ? 0 : index.postingEnds[t - 1]!);
const postingCount = (index: SourceIndex, t: number) => index.postingEnds[t]! - postingStart(index, t);
const typosOf = (cls: number) => (cls > STEM ? cls - STEM : 0);

/** The terms with the stem `stem`. */
function stemTerms(index: SourceIndex, stem: string): Int32Array {
  const [first, end] = equalRange(index.stems, Buffer.from(stem, 'utf8'));
  if (first === end) return new Int32Array(0);
  return index.stemTerms.subarray(first === 0 ? 0 : index.stemEnds[first - 1]!, index.stemEnds[first]!);
}

const hasDigit = (text: string) => /\p{N}/u.test(text);

/**
 * Recently used words' terms per index, so a frequent word's typo walk and stem look-up are done
 * once per version (the index is immutable, so an entry never goes stale), bounded by the terms held:
 * the oldest entries go first beyond CACHED_TERMS.
 */
interface WordCache {
  readonly entries: Map<string, WordTerms>;
  terms: number;
}

const CACHED_TERMS = 1 << 20;
const wordCaches = new WeakMap<SourceIndex, WordCache>();

function wordTerms(index: SourceIndex, word: string, rules: MatchRules, checkDeadline: () => void, prefixes = true): WordTerms {
  let cache = wordCaches.get(index);
  if (!cache) wordCaches.set(index, (cache = { entries: new Map(), terms: 0 }));
  const key = `${+rules.stems}${+rules.typos}${+prefixes}${word}`;
  const known = cache.entries.get(key);
  if (known) return known;
  const computed = computeWordTerms(index, word, rules, checkDeadline, prefixes);
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

/** What one word matches: its form and prefixes, then (by the rules) its stem's terms and its typos' terms and stems. */
function computeWordTerms(index: SourceIndex, word: string, rules: MatchRules, checkDeadline: () => void, prefixes: boolean): WordTerms {
  const key = Buffer.from(word, 'utf8');
  const [first, end] = prefixes && matchesAsPrefix(word) ? prefixRange(index.terms, key) : equalRange(index.terms, key);
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
 * numbers, tickers and ids are typed exactly), with their stems' terms, at most MAX_TYPO_TERMS of them, the fewest typos and most
 * documents first. Returns the stem of the closest one.
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

/**
 * One pass over a word's postings: sums each document's weighted tf into the scratch, flags the
 * documents where a whole-word term is a primary word, keeps the closest class, and records each
 * document once into `touched` when given. Returns the word's document frequency.
 */
function sumWord(index: SourceIndex, scratch: Scratch, word: WordTerms, checkDeadline: () => void, touched?: Int32Array): number {
  const stamp = nextStamp(scratch);
  const { seen, tf, flag, cls } = scratch;
  const { postingDocs, postingTf, postingPrimary } = index;
  let df = 0;
  for (let e = 0; e < word.terms.length; e++) {
    const t = word.terms[e]!;
    const weight = word.weights[e]!;
    const whole = word.wholes[e]!;
    const c = word.classes[e]!;
    const end = index.postingEnds[t]!;
    for (let p = postingStart(index, t); p < end; ) {
      const blockEnd = Math.min(end, p + BLOCK);
      for (; p < blockEnd; p++) {
        const doc = postingDocs[p]!;
        if (seen[doc] !== stamp) {
          seen[doc] = stamp;
          tf[doc] = 0;
          flag[doc] = 0;
          cls[doc] = NONE;
          if (touched) touched[df] = doc;
          df++;
        }
        tf[doc]! += postingTf[p]! * weight;
        flag[doc]! |= whole & postingPrimary[p]!;
        if (c < cls[doc]!) cls[doc] = c;
      }
      checkDeadline();
    }
  }
  return df;
}

/** Keeps the matches the last `sumWord` pass saw, adding the word's BM25, typos and stem-only count. */
function addWord(index: SourceIndex, scratch: Scratch, matches: Matches, df: number): void {
  const idf = idfOf(index, df);
  const { seen, tf, flag, cls, stamp } = scratch;
  const { docs, scores, whole, typos, stems } = matches;
  let kept = 0;
  for (let j = 0; j < matches.count; j++) {
    const doc = docs[j]!;
    if (seen[doc] !== stamp) continue;
    docs[kept] = doc;
    scores[kept] = scores[j]! + bm25(idf, tf[doc]!, index.norms[doc]!);
    whole[kept] = whole[j]! & flag[doc]!;
    typos[kept] = typos[j]! + typosOf(cls[doc]!);
    stems[kept] = stems[j]! + (cls[doc] === STEM ? 1 : 0);
    kept++;
  }
  matches.count = kept;
}

/** The BM25 of one term in one document. */
const bm25 = (idf: number, tf: number, norm: number) => (idf * tf * (K1 + 1)) / (tf + norm);

const idfOf = (index: SourceIndex, df: number) => Math.log(1 + (index.documents - df + 0.5) / (df + 0.5));

/** The matches of a word with one term: its posting list itself, no pass to merge. */
function listMatches(index: SourceIndex, word: WordTerms): Matches {
  const start = postingStart(index, word.terms[0]!);
  const count = word.postings;
  const [weight, whole, cls] = [word.weights[0]!, word.wholes[0]!, word.classes[0]!];
  const idf = idfOf(index, count);
  const docs = index.postingDocs.slice(start, start + count);
  const scores = new Float64Array(count);
  const wholes = new Uint8Array(count);
  for (let j = 0; j < count; j++) {
    const tf = index.postingTf[start + j]! * weight;
    scores[j] = bm25(idf, tf, index.norms[docs[j]!]!);
    wholes[j] = whole & index.postingPrimary[start + j]!;
  }
  return { count, docs, scores, whole: wholes, typos: new Uint8Array(count).fill(typosOf(cls)), stems: new Uint8Array(count).fill(cls === STEM ? 1 : 0) };
}

/** The matches of the word with the fewest postings: the candidates the other words filter. */
function firstMatches(index: SourceIndex, scratch: Scratch, word: WordTerms, checkDeadline: () => void): Matches {
  if (word.terms.length === 1) return listMatches(index, word);
  const touched = new Int32Array(word.postings);
  const count = sumWord(index, scratch, word, checkDeadline, touched);
  const matches: Matches = {
    count, docs: touched, scores: new Float64Array(count), whole: new Uint8Array(count).fill(1),
    typos: new Uint8Array(count), stems: new Uint8Array(count),
  };
  addWord(index, scratch, matches, count);
  return matches;
}

/** The first posting of `doc` in `[from, to)` of a term's list (sorted by document), or −1. */
function findPosting(docs: Int32Array, from: number, to: number, doc: number): number {
  let low = from;
  let high = to;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (docs[middle]! < doc) low = middle + 1;
    else high = middle;
  }
  return low < to && docs[low] === doc ? low : -1;
}

/**
 * A word with one long posting list and few candidates left: each candidate is looked up in the
 * list by binary search instead of a pass over the list (its document frequency is its length).
 */
function filterByList(index: SourceIndex, matches: Matches, word: WordTerms): void {
  const start = postingStart(index, word.terms[0]!);
  const end = start + word.postings;
  const [weight, whole, cls] = [word.weights[0]!, word.wholes[0]!, word.classes[0]!];
  const idf = idfOf(index, word.postings);
  const { docs, scores, typos, stems } = matches;
  let kept = 0;
  for (let j = 0; j < matches.count; j++) {
    const doc = docs[j]!;
    const p = findPosting(index.postingDocs, start, end, doc);
    if (p < 0) continue;
    const tf = index.postingTf[p]! * weight;
    docs[kept] = doc;
    scores[kept] = scores[j]! + bm25(idf, tf, index.norms[doc]!);
    matches.whole[kept] = matches.whole[j]! & whole & index.postingPrimary[p]!;
    typos[kept] = typos[j]! + typosOf(cls);
    stems[kept] = stems[j]! + (cls === STEM ? 1 : 0);
    kept++;
  }
  matches.count = kept;
}

/**
 * A word with several terms, after the first: one pass over its postings counts its documents (its
 * df) in a bit set and sums tf for the candidates only, so the pass touches the large per-document
 * arrays for candidates alone.
 */
function filterByUnion(index: SourceIndex, scratch: Scratch, matches: Matches, word: WordTerms, checkDeadline: () => void): void {
  const { tf, flag, cls, termBits, candidateBits } = scratch;
  const { postingDocs, postingTf, postingPrimary } = index;
  termBits.fill(0);
  candidateBits.fill(0);
  for (let j = 0; j < matches.count; j++) {
    const doc = matches.docs[j]!;
    candidateBits[doc >>> 5]! |= 1 << (doc & 31);
    tf[doc] = 0;
    flag[doc] = 0;
    cls[doc] = NONE;
  }
  let df = 0;
  for (let e = 0; e < word.terms.length; e++) {
    const t = word.terms[e]!;
    const weight = word.weights[e]!;
    const whole = word.wholes[e]!;
    const c = word.classes[e]!;
    const end = index.postingEnds[t]!;
    for (let p = postingStart(index, t); p < end; ) {
      const blockEnd = Math.min(end, p + BLOCK);
      for (; p < blockEnd; p++) {
        const doc = postingDocs[p]!;
        const at = doc >>> 5;
        const bit = 1 << (doc & 31);
        if ((termBits[at]! & bit) === 0) {
          termBits[at]! |= bit;
          df++;
        }
        if ((candidateBits[at]! & bit) !== 0) {
          tf[doc]! += postingTf[p]! * weight;
          flag[doc]! |= whole & postingPrimary[p]!;
          if (c < cls[doc]!) cls[doc] = c;
        }
      }
      checkDeadline();
    }
  }
  const idf = idfOf(index, df);
  const { docs, scores, whole, typos, stems } = matches;
  let kept = 0;
  for (let j = 0; j < matches.count; j++) {
    const doc = docs[j]!;
    if ((termBits[doc >>> 5]! & (1 << (doc & 31))) === 0) continue;
    docs[kept] = doc;
    scores[kept] = scores[j]! + bm25(idf, tf[doc]!, index.norms[doc]!);
    whole[kept] = whole[j]! & flag[doc]!;
    typos[kept] = typos[j]! + typosOf(cls[doc]!);
    stems[kept] = stems[j]! + (cls[doc] === STEM ? 1 : 0);
    kept++;
  }
  matches.count = kept;
}

/** Binary search wins over a pass when the list is this many times longer than the candidates. */
const SEARCH_OVER_PASS = 16;

/** Every document matching every word, with its BM25 score, typos, stem-only words and whether every word is a primary word of it. */
function matchAll(index: SourceIndex, words: readonly WordTerms[], checkDeadline: () => void): Matches {
  const scratch = scratchOf(index);
  // Fewest postings first: the first word's documents are the candidates the others filter.
  const [first, ...rest] = [...words].sort((a, b) => a.postings - b.postings);
  const matches = firstMatches(index, scratch, first!, checkDeadline);
  for (const word of rest) {
    if (matches.count === 0) break;
    if (word.terms.length === 1 && matches.count * SEARCH_OVER_PASS < word.postings) filterByList(index, matches, word);
    else filterByUnion(index, scratch, matches, word, checkDeadline);
    checkDeadline();
  }
  return matches;
}

/** The documents whose title starts with the phrase as whole words (bits), and those whose title equals it. */
interface Titled {
  readonly bits: Uint32Array;
  readonly exact: Set<number>;
}

/**
 * The documents with a title equal to the phrase (tier 0) or starting with it as whole words
 * (tier 1), as a bit set of every document (it stays in the CPU's cache while the ranking tests
 * every match against it) and the few exact ones. Titles are space-joined stems, so the range
 * `[phrase, phrase ‖ ' ' ‖ 0xFF)` holds exactly those titles.
 */
function titledDocs(index: SourceIndex, scratch: Scratch, phrase: string): Titled {
  const key = Buffer.from(phrase, 'utf8');
  const first = lowerBound(index.titles, key);
  const end = lowerBound(index.titles, Buffer.concat([key, Buffer.from([0x20, AFTER_EVERY_CONTINUATION])]));
  const bits = scratch.titleBits;
  bits.fill(0);
  const exact = new Set<number>();
  for (let i = first; i < end; i++) {
    const doc = index.titleDocs[i]!;
    bits[doc >>> 5]! |= 1 << (doc & 31);
    if (textLength(index.titles, i) === key.length) exact.add(doc);
  }
  return { bits, exact };
}

/** Whether `a` ranks before `b`: the rules in order (see the top of this file). */
const ranksBefore = (a: RankedDoc, b: RankedDoc) =>
  a.typos !== b.typos ? a.typos < b.typos
    : a.tier !== b.tier ? a.tier < b.tier
      : a.stems !== b.stems ? a.stems < b.stems
        : a.score !== b.score ? a.score > b.score : a.doc < b.doc;

/** Adds `ranked` to a sorted page of at most `limit` (≤ 50) when it belongs there. */
function insertTop(top: RankedDoc[], ranked: RankedDoc, limit: number): void {
  if (top.length === limit && !ranksBefore(ranked, top[limit - 1]!)) return;
  let at = top.length;
  while (at > 0 && ranksBefore(ranked, top[at - 1]!)) at--;
  top.splice(at, 0, ranked);
  if (top.length > limit) top.pop();
}

/** Every match of one reading, as ranked documents, given to `visit`. Returns the count. */
function eachRanked(index: SourceIndex, reading: Reading, checkDeadline: () => void, visit: (ranked: RankedDoc) => void): number {
  const matches = matchAll(index, reading.words, checkDeadline);
  if (matches.count === 0) return 0;
  const titled = titledDocs(index, scratchOf(index), reading.phrase);
  for (let j = 0; j < matches.count; j++) {
    const doc = matches.docs[j]!;
    const inTitle = (titled.bits[doc >>> 5]! & (1 << (doc & 31))) !== 0;
    const tier = inTitle ? (titled.exact.has(doc) ? 0 : 1) : matches.whole[j] ? 2 : 3;
    visit({ doc, typos: reading.typos + matches.typos[j]!, tier, stems: matches.stems[j]!, score: matches.scores[j]! });
  }
  checkDeadline();
  return matches.count;
}

/** Whether the dictionary holds `term` as a whole term. */
function inDictionary(index: SourceIndex, term: string): boolean {
  const [first, end] = equalRange(index.terms, Buffer.from(term, 'utf8'));
  return first < end;
}

/**
 * The best split of a word into two terms the dictionary holds ("unet" is `u net`), the split
 * whose rarer half has the most documents, or undefined.
 */
function splitOf(index: SourceIndex, word: string): [string, string] | undefined {
  let best: [string, string] | undefined;
  let bestPostings = 0;
  for (let at = 1; at < word.length; at++) {
    const [left, right] = [word.slice(0, at), word.slice(at)];
    const [l0, l1] = equalRange(index.terms, Buffer.from(left, 'utf8'));
    const [r0, r1] = equalRange(index.terms, Buffer.from(right, 'utf8'));
    if (l0 === l1 || r0 === r1) continue;
    const postings = Math.min(postingCount(index, l0), postingCount(index, r0));
    if (postings > bestPostings) [best, bestPostings] = [[left, right], postings];
  }
  return best;
}

/**
 * The readings of the words: as typed; each two adjacent words joined when the dictionary holds
 * their concatenation (no typo); each word absent from the dictionary split in two (one typo).
 * `phrase` is every keyword, in order, when no word was dropped (the title tiers compare them all).
 */
function readingsOf(index: SourceIndex, words: readonly string[], phrase: readonly string[], rules: MatchRules, checkDeadline: () => void): Reading[] {
  const termsOf = (word: string, prefixes = true) => wordTerms(index, word, rules, checkDeadline, prefixes);
  const reading = (parts: WordTerms[], typos: number): Reading => ({ words: parts, typos, phrase: parts.map((p) => p.stem).join(' ') });
  const typed = words.map((word) => termsOf(word));
  const stemOfTyped = new Map(words.map((word, i) => [word, typed[i]!.stem]));
  const readings: Reading[] = [{ words: typed, typos: 0, phrase: phrase.map((word) => stemOfTyped.get(word) ?? stemOf(word)).join(' ') }];
  if (!rules.splits) return readings;
  for (let i = 0; i + 1 < words.length; i++) {
    const joined = words[i]! + words[i + 1]!;
    if (!inDictionary(index, joined)) continue;
    readings.push(reading([...typed.slice(0, i), termsOf(joined, false), ...typed.slice(i + 2)], 0));
  }
  // A split counts as a typo, so it is looked for with the typos only.
  words.forEach((word, i) => {
    if (!rules.typos || hasDigit(word) || inDictionary(index, word)) return;
    const split = splitOf(index, word);
    if (!split) return;
    const halves = split.map((half) => wordTerms(index, half, { ...AS_TYPED, stems: rules.stems }, checkDeadline, false));
    readings.push(reading([...typed.slice(0, i), ...halves, ...typed.slice(i + 1)], 1));
  });
  return readings;
}

/** The ranking of the words as one query (every word must match, in one of its readings). */
function rankWords(index: SourceIndex, words: readonly string[], phrase: readonly string[], limit: number, rules: MatchRules, checkDeadline: () => void): Ranking {
  const readings = readingsOf(index, words, phrase, rules, checkDeadline).filter((r) => r.words.every((w) => w.terms.length > 0));
  const top: RankedDoc[] = [];
  if (readings.length === 1) {
    const total = eachRanked(index, readings[0]!, checkDeadline, (ranked) => insertTop(top, ranked, limit));
    return { total, docs: top };
  }
  // Several readings: a document counts once, at its best.
  const best = new Map<number, RankedDoc>();
  for (const reading of readings) {
    eachRanked(index, reading, checkDeadline, (ranked) => {
      const known = best.get(ranked.doc);
      if (!known || ranksBefore(ranked, known)) best.set(ranked.doc, ranked);
    });
  }
  for (const ranked of best.values()) insertTop(top, ranked, limit);
  return { total: best.size, docs: top };
}

/**
 * The words ranked as one query, typos looked for only when the answers without them do not fill
 * the page: as in a search engine's bucket sort, a page of answers as typed (forms, prefixes,
 * stems, joined words) never waits for typo candidates, which would rank after them anyway. `total`
 * counts what was matched: the answers as typed, or those and the typos' when they were looked for.
 */
function rankBuckets(index: SourceIndex, words: readonly string[], phrase: readonly string[], limit: number, rules: MatchRules, checkDeadline: () => void): Ranking {
  if (!rules.typos) return rankWords(index, words, phrase, limit, rules, checkDeadline);
  const asTyped = rankWords(index, words, phrase, limit, { ...rules, typos: false }, checkDeadline);
  return asTyped.total >= limit ? asTyped : rankWords(index, words, phrase, limit, rules, checkDeadline);
}

/**
 * The word lists tried in turn when no document holds every word: the words without their stop
 * words ("procter and gamble" is `procter gamble`), then dropping from the last one back
 * (Meilisearch's `words` rule), never down to stop words alone.
 */
function fewerWords(words: readonly string[]): string[][] {
  const content = words.filter((word) => !isStopWord(word));
  if (content.length === 0) return [];
  const lists = content.length < words.length ? [content] : [];
  for (let kept = words.length - 1; kept > 0; kept--) {
    const fewer = words.slice(0, kept);
    if (!fewer.every(isStopWord)) lists.push(fewer);
  }
  return lists;
}

/**
 * The ranked page and total of a lookup. With FORGIVING rules, when no document holds every word,
 * fewer words are tried (`fewerWords`) until some document holds them.
 */
export function rankDocuments(index: SourceIndex, keywords: string, limit: number, checkDeadline: () => void, rules: MatchRules = FORGIVING): Ranking {
  const words = queryTerms(keywords);
  if (words.length === 0) return NO_MATCH;
  const ranking = rankBuckets(index, words, searchTerms(keywords), limit, rules, checkDeadline);
  if (ranking.total > 0 || !rules.dropWords) return ranking;
  for (const fewer of fewerWords(words)) {
    const kept = rankBuckets(index, fewer, fewer, limit, rules, checkDeadline);
    if (kept.total > 0) return kept;
  }
  return NO_MATCH;
}
