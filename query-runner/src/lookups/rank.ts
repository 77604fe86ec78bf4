/**
 * Ranks a stored lookup over the in-memory index (`search-index.ts`), reading only the postings of
 * the query's terms: the work follows the number of postings those terms have, not the table size.
 *
 * Ranking, best first: tier 0, a primary text (a title, an author, a company name, a ticker, an
 * arXiv id) equals the keywords; 1, it starts with them as whole words; 2, every term is a whole
 * word of the primary fields; 3, the rest. Within a tier by BM25 (field-weighted, a prefix-only
 * match counting PREFIX_WEIGHT), then by `doc`, the source's tie order. `total` counts every match
 * exactly. These are the rules the SQL reference (`test/bm25-sql.ts`) states, and
 * `rank.agrees.test.ts` compares the two on random queries.
 *
 * Each term's postings are summed per document in dense per-source scratch arrays stamped per pass
 * (no clearing between lookups). The ranking is synchronous, so lookups never share the scratch
 * concurrently; `checkDeadline` is called between blocks of postings, so the query deadline bounds
 * the work (at most MAX_TERMS terms, each at most every posting of the source).
 */
import { K1, matchesAsPrefix, PREFIX_WEIGHT, queryTerms, titlePhrase } from './query-terms.ts';
import type { SourceIndex } from './search-index.ts';
import { equalRange, lowerBound, prefixRange, textLength } from './sorted-texts.ts';

export interface RankedDoc {
  readonly doc: number;
  readonly tier: number;
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

/** The dictionary entries a query term matches: `[first, end)`, and which one is the term itself (−1: none). */
interface TermRange {
  readonly first: number;
  readonly end: number;
  readonly exact: number;
  readonly postings: number;
}

/**
 * Per document: `seen[doc] === stamp` marks the documents of the current pass, whose `tf` and
 * `flag` are set. Bit sets of every document (a few hundred KB, so they stay in the CPU's cache
 * where the Int32 stamps do not) count a long term's documents, test its postings against the
 * candidates, and mark the titled documents.
 */
interface Scratch {
  stamp: number;
  readonly seen: Int32Array;
  readonly tf: Float64Array;
  readonly flag: Uint8Array;
  readonly termBits: Uint32Array;
  readonly candidateBits: Uint32Array;
  readonly titleBits: Uint32Array;
}

/** The documents still matching every term so far, with their partial scores. */
interface Matches {
  count: number;
  readonly docs: Int32Array;
  readonly scores: Float64Array;
  readonly whole: Uint8Array;
}

const scratches = new WeakMap<SourceIndex, Scratch>();

function scratchOf(index: SourceIndex): Scratch {
  let scratch = scratches.get(index);
  if (!scratch) {
    const size = index.documents + 1;
    const words = (size >>> 5) + 1;
    scratch = {
      stamp: 0, seen: new Int32Array(size), tf: new Float64Array(size), flag: new Uint8Array(size),
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

function termRange(index: SourceIndex, term: string): TermRange {
  const key = Buffer.from(term, 'utf8');
  const [first, end] = matchesAsPrefix(term) ? prefixRange(index.terms, key) : equalRange(index.terms, key);
  // Every entry of the range starts with the term, so the one as long as the term is the term.
  const exact = first < end && textLength(index.terms, first) === key.length ? first : -1;
  const postings = first < end ? index.postingEnds[end - 1]! - postingStart(index, first) : 0;
  return { first, end, exact, postings };
}

/**
 * One pass over a term's postings: sums each document's tf into the scratch (a prefix-only term at
 * PREFIX_WEIGHT), flags the documents where the term itself is a primary word, and records each
 * document once into `touched` when given. Returns the term's document frequency.
 */
function sumTerm(index: SourceIndex, scratch: Scratch, range: TermRange, checkDeadline: () => void, touched?: Int32Array): number {
  const stamp = nextStamp(scratch);
  const { seen, tf, flag } = scratch;
  const { postingDocs, postingTf, postingPrimary } = index;
  let df = 0;
  for (let t = range.first; t < range.end; t++) {
    const weight = t === range.exact ? 1 : PREFIX_WEIGHT;
    const whole = t === range.exact ? 1 : 0;
    const end = index.postingEnds[t]!;
    for (let p = postingStart(index, t); p < end; ) {
      const blockEnd = Math.min(end, p + BLOCK);
      for (; p < blockEnd; p++) {
        const doc = postingDocs[p]!;
        if (seen[doc] !== stamp) {
          seen[doc] = stamp;
          tf[doc] = 0;
          flag[doc] = 0;
          if (touched) touched[df] = doc;
          df++;
        }
        tf[doc]! += postingTf[p]! * weight;
        flag[doc]! |= whole & postingPrimary[p]!;
      }
      checkDeadline();
    }
  }
  return df;
}

/** Keeps the matches the last `sumTerm` pass saw, adding the term's BM25 to their scores. */
function addTerm(index: SourceIndex, scratch: Scratch, matches: Matches, df: number): void {
  const idf = idfOf(index, df);
  const { seen, tf, flag, stamp } = scratch;
  const { docs, scores, whole } = matches;
  let kept = 0;
  for (let j = 0; j < matches.count; j++) {
    const doc = docs[j]!;
    if (seen[doc] !== stamp) continue;
    const termTf = tf[doc]!;
    docs[kept] = doc;
    scores[kept] = scores[j]! + bm25(idf, termTf, index.norms[doc]!);
    whole[kept] = whole[j]! & flag[doc]!;
    kept++;
  }
  matches.count = kept;
}

/** The BM25 of one term in one document. */
const bm25 = (idf: number, tf: number, norm: number) => (idf * tf * (K1 + 1)) / (tf + norm);

const idfOf = (index: SourceIndex, df: number) => Math.log(1 + (index.documents - df + 0.5) / (df + 0.5));

/** The matches of a term with one posting list (a whole term, or a prefix only one term has): the list itself, no pass to merge. */
function listMatches(index: SourceIndex, range: TermRange): Matches {
  const start = postingStart(index, range.first);
  const count = range.postings;
  const weight = range.exact === range.first ? 1 : PREFIX_WEIGHT;
  const whole = range.exact === range.first ? 1 : 0;
  const idf = idfOf(index, count);
  const docs = index.postingDocs.slice(start, start + count);
  const scores = new Float64Array(count);
  const wholes = new Uint8Array(count);
  for (let j = 0; j < count; j++) {
    const tf = index.postingTf[start + j]! * weight;
    scores[j] = bm25(idf, tf, index.norms[docs[j]!]!);
    wholes[j] = whole & index.postingPrimary[start + j]!;
  }
  return { count, docs, scores, whole: wholes };
}

/** The matches of the term with the fewest postings: the candidates the other terms filter. */
function firstMatches(index: SourceIndex, scratch: Scratch, range: TermRange, checkDeadline: () => void): Matches {
  if (range.end - range.first === 1) return listMatches(index, range);
  const touched = new Int32Array(range.postings);
  const count = sumTerm(index, scratch, range, checkDeadline, touched);
  const matches: Matches = { count, docs: touched, scores: new Float64Array(count), whole: new Uint8Array(count).fill(1) };
  addTerm(index, scratch, matches, count);
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
 * A term with one long posting list and few candidates left: each candidate is looked up in the
 * list by binary search instead of a pass over the list (its document frequency is its length).
 */
function filterByList(index: SourceIndex, matches: Matches, range: TermRange): void {
  const start = postingStart(index, range.first);
  const end = start + range.postings;
  const weight = range.exact === range.first ? 1 : PREFIX_WEIGHT;
  const whole = range.exact === range.first ? 1 : 0;
  const idf = idfOf(index, range.postings);
  const { docs, scores } = matches;
  let kept = 0;
  for (let j = 0; j < matches.count; j++) {
    const doc = docs[j]!;
    const p = findPosting(index.postingDocs, start, end, doc);
    if (p < 0) continue;
    const tf = index.postingTf[p]! * weight;
    docs[kept] = doc;
    scores[kept] = scores[j]! + bm25(idf, tf, index.norms[doc]!);
    matches.whole[kept] = matches.whole[j]! & whole & index.postingPrimary[p]!;
    kept++;
  }
  matches.count = kept;
}

/**
 * A term with several posting lists (a prefix's terms), after the first: one pass over its postings
 * counts its documents (its df) in a bit set and sums tf for the candidates only, so the pass
 * touches the large per-document arrays for candidates alone.
 */
function filterByUnion(index: SourceIndex, scratch: Scratch, matches: Matches, range: TermRange, checkDeadline: () => void): void {
  const { tf, flag, termBits, candidateBits } = scratch;
  const { postingDocs, postingTf, postingPrimary } = index;
  termBits.fill(0);
  candidateBits.fill(0);
  for (let j = 0; j < matches.count; j++) {
    const doc = matches.docs[j]!;
    candidateBits[doc >>> 5]! |= 1 << (doc & 31);
    tf[doc] = 0;
    flag[doc] = 0;
  }
  let df = 0;
  for (let t = range.first; t < range.end; t++) {
    const weight = t === range.exact ? 1 : PREFIX_WEIGHT;
    const whole = t === range.exact ? 1 : 0;
    const end = index.postingEnds[t]!;
    for (let p = postingStart(index, t); p < end; ) {
      const blockEnd = Math.min(end, p + BLOCK);
      for (; p < blockEnd; p++) {
        const doc = postingDocs[p]!;
        const word = doc >>> 5;
        const bit = 1 << (doc & 31);
        if ((termBits[word]! & bit) === 0) {
          termBits[word]! |= bit;
          df++;
        }
        if ((candidateBits[word]! & bit) !== 0) {
          tf[doc]! += postingTf[p]! * weight;
          flag[doc]! |= whole & postingPrimary[p]!;
        }
      }
      checkDeadline();
    }
  }
  const idf = idfOf(index, df);
  const { docs, scores, whole } = matches;
  let kept = 0;
  for (let j = 0; j < matches.count; j++) {
    const doc = docs[j]!;
    if ((termBits[doc >>> 5]! & (1 << (doc & 31))) === 0) continue;
    docs[kept] = doc;
    scores[kept] = scores[j]! + bm25(idf, tf[doc]!, index.norms[doc]!);
    whole[kept] = whole[j]! & flag[doc]!;
    kept++;
  }
  matches.count = kept;
}

/** Binary search wins over a pass when the list is this many times longer than the candidates. */
const SEARCH_OVER_PASS = 16;

/** Every document matching every term, with its BM25 score and whether every term is a primary word of it. */
function matchAll(index: SourceIndex, ranges: TermRange[], checkDeadline: () => void): Matches {
  const scratch = scratchOf(index);
  // Fewest postings first: the first term's documents are the candidates the others filter.
  const [first, ...rest] = [...ranges].sort((a, b) => a.postings - b.postings);
  const matches = firstMatches(index, scratch, first!, checkDeadline);
  for (const range of rest) {
    if (matches.count === 0) break;
    if (range.end - range.first === 1 && matches.count * SEARCH_OVER_PASS < range.postings) filterByList(index, matches, range);
    else filterByUnion(index, scratch, matches, range, checkDeadline);
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
 * every match against it) and the few exact ones. Titles are space-joined terms, so the range
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

/** Whether the match (tier, score, doc) ranks before `other`. */
const ranksBefore = (tier: number, score: number, doc: number, other: RankedDoc) =>
  tier !== other.tier ? tier < other.tier : score !== other.score ? score > other.score : doc < other.doc;

/** The best `limit` matches, in order: an insertion into a sorted page of at most `limit` (≤ 50). */
function topDocs(matches: Matches, tierOf: (j: number) => number, limit: number): RankedDoc[] {
  const top: RankedDoc[] = [];
  for (let j = 0; j < matches.count; j++) {
    const tier = tierOf(j);
    const score = matches.scores[j]!;
    const doc = matches.docs[j]!;
    if (top.length === limit && !ranksBefore(tier, score, doc, top[limit - 1]!)) continue;
    let at = top.length;
    while (at > 0 && ranksBefore(tier, score, doc, top[at - 1]!)) at--;
    top.splice(at, 0, { doc, tier, score });
    if (top.length > limit) top.pop();
  }
  return top;
}

export function rankDocuments(index: SourceIndex, keywords: string, limit: number, checkDeadline: () => void): Ranking {
  const ranges = queryTerms(keywords).map((term) => termRange(index, term));
  if (ranges.length === 0 || ranges.some((range) => range.first === range.end)) return NO_MATCH;
  const matches = matchAll(index, ranges, checkDeadline);
  if (matches.count === 0) return NO_MATCH;
  const titled = titledDocs(index, scratchOf(index), titlePhrase(keywords));
  const tierOf = (j: number) => {
    const doc = matches.docs[j]!;
    if ((titled.bits[doc >>> 5]! & (1 << (doc & 31))) !== 0) return titled.exact.has(doc) ? 0 : 1;
    return matches.whole[j] ? 2 : 3;
  };
  const docs = topDocs(matches, tierOf, limit);
  checkDeadline();
  return { total: matches.count, docs };
}
