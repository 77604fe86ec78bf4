/**
 * The documents matching every word of a reading, with what the ranking rules need of each: its
 * BM25 score, typos, words matched outside the primary fields and words matched only by stem. Only
 * the postings of the words' terms are read, so the work follows their number, not the table size.
 *
 * The rarest word's documents are the candidates; each further word filters them, by binary search
 * in its list when it is one long list against few candidates, else by one pass over its postings
 * (`sumPostings`, the one postings loop) that counts its documents in a bit set (its df) and sums
 * tf for the candidates. Bit sets of every document are a few hundred KB, so they stay in the CPU's
 * cache. The scratch arrays are per index and per thread (the ranking is synchronous, so lookups
 * never share them concurrently); `checkDeadline` is called between blocks of postings.
 */
import { postingStart, type SourceIndex } from '../index/source-index.ts';
import { normAt } from '../index/posting-extras.ts';
import { STEM, typosOf, type WordTerms } from '../query/word-terms.ts';
import { bm25, idfOf } from './bm25.ts';

/** Postings summed between two deadline checks: well under a millisecond of work. */
const BLOCK = 1 << 16;
const NONE = 255;
/** Binary search wins over a pass when the list is this many times longer than the candidates. */
export const SEARCH_OVER_PASS = 16;

interface Scratch {
  readonly tf: Float64Array;
  readonly flag: Uint8Array;
  readonly cls: Uint8Array;
  readonly termBits: Uint32Array;
  readonly candidateBits: Uint32Array;
  readonly titleBits: Uint32Array;
}

/** The documents still matching every word so far, with their partial scores, outside words, typos and stem-only words. */
export interface Matches {
  count: number;
  readonly docs: Int32Array;
  readonly scores: Float64Array;
  readonly outside: Uint8Array;
  readonly typos: Uint8Array;
  readonly stems: Uint8Array;
}

const scratches = new WeakMap<SourceIndex, Scratch>();

export function scratchOf(index: SourceIndex): Scratch {
  let scratch = scratches.get(index);
  if (!scratch) {
    const size = index.documents + 1;
    const words = (size >>> 5) + 1;
    scratch = {
      tf: new Float64Array(size), flag: new Uint8Array(size), cls: new Uint8Array(size),
      termBits: new Uint32Array(words), candidateBits: new Uint32Array(words), titleBits: new Uint32Array(words),
    };
    scratches.set(index, scratch);
  }
  return scratch;
}

export const hasBit = (bits: Uint32Array, doc: number) => (bits[doc >>> 5]! & (1 << (doc & 31))) !== 0;

/**
 * One pass over a word's postings: marks its documents in `termBits` and returns their count (its
 * df). For the candidates (every document when `candidates` is undefined, whose first posting then
 * starts its sums and records it in `touched`), sums the weighted tf, flags a whole-word term in a
 * primary field and keeps the closest class.
 */
function sumPostings(index: SourceIndex, scratch: Scratch, word: WordTerms, checkDeadline: () => void, candidates?: Uint32Array, touched?: Int32Array): number {
  const { tf, flag, cls, termBits } = scratch;
  const { postingDocs, postingTf, postingPrimary } = index;
  termBits.fill(0);
  let df = 0;
  for (let e = 0; e < word.terms.length; e++) {
    const t = word.terms[e]!;
    const [weight, whole, c] = [word.weights[e]!, word.wholes[e]!, word.classes[e]!];
    const end = index.postingEnds[t]!;
    for (let p = postingStart(index, t); p < end;) {
      const blockEnd = Math.min(end, p + BLOCK);
      for (; p < blockEnd; p++) {
        const doc = postingDocs[p]!;
        const at = doc >>> 5;
        const bit = 1 << (doc & 31);
        if ((termBits[at]! & bit) === 0) {
          termBits[at]! |= bit;
          if (touched) {
            touched[df] = doc;
            tf[doc] = 0;
            flag[doc] = 0;
            cls[doc] = NONE;
          }
          df++;
        }
        if (candidates && (candidates[at]! & bit) === 0) continue;
        tf[doc]! += postingTf[p]! * weight;
        flag[doc]! |= whole & postingPrimary[p]!;
        if (c < cls[doc]!) cls[doc] = c;
      }
      checkDeadline();
    }
  }
  return df;
}

/** Keeps the matches in `termBits` (the last pass's documents), adding the word's BM25, outside, typos and stem-only count. */
function keepSummed(index: SourceIndex, scratch: Scratch, matches: Matches, df: number): void {
  const idf = idfOf(index, df);
  const { tf, flag, cls, termBits } = scratch;
  const { docs, scores, outside, typos, stems } = matches;
  let kept = 0;
  for (let j = 0; j < matches.count; j++) {
    const doc = docs[j]!;
    if (!hasBit(termBits, doc)) continue;
    docs[kept] = doc;
    scores[kept] = scores[j]! + bm25(idf, tf[doc]!, index.norms[doc]!);
    outside[kept] = outside[j]! + 1 - flag[doc]!;
    typos[kept] = typos[j]! + typosOf(cls[doc]!);
    stems[kept] = stems[j]! + (cls[doc] === STEM ? 1 : 0);
    kept++;
  }
  matches.count = kept;
}

/** The matches of a word with one term: its posting list itself, no pass to merge. */
function listMatches(index: SourceIndex, word: WordTerms): Matches {
  const start = postingStart(index, word.terms[0]!);
  const count = word.postings;
  const [weight, whole, cls] = [word.weights[0]!, word.wholes[0]!, word.classes[0]!];
  const idf = idfOf(index, count);
  const docs = index.postingDocs.slice(start, start + count);
  const scores = new Float64Array(count);
  const outside = new Uint8Array(count);
  for (let j = 0; j < count; j++) {
    scores[j] = bm25(idf, index.postingTf[start + j]! * weight, normAt(index, start + j, docs[j]!));
    outside[j] = 1 - (whole & index.postingPrimary[start + j]!);
  }
  return { count, docs, scores, outside, typos: new Uint8Array(count).fill(typosOf(cls)), stems: new Uint8Array(count).fill(cls === STEM ? 1 : 0) };
}

/** The matches of the word with the fewest postings: the candidates the other words filter. */
function firstMatches(index: SourceIndex, scratch: Scratch, word: WordTerms, checkDeadline: () => void): Matches {
  if (word.terms.length === 1) return listMatches(index, word);
  const touched = new Int32Array(word.postings);
  const count = sumPostings(index, scratch, word, checkDeadline, undefined, touched);
  const matches: Matches = {
    count, docs: touched, scores: new Float64Array(count), outside: new Uint8Array(count), typos: new Uint8Array(count), stems: new Uint8Array(count),
  };
  keepSummed(index, scratch, matches, count);
  return matches;
}

/** The first posting of `doc` in `[from, to)` of a term's list (sorted by document), or −1. */
export function findPosting(docs: Int32Array, from: number, to: number, doc: number): number {
  let low = from;
  let high = to;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (docs[middle]! < doc) low = middle + 1;
    else high = middle;
  }
  return low < to && docs[low] === doc ? low : -1;
}

/** A word with one long posting list and few candidates left: each candidate is looked up in the list by binary search. */
function filterByList(index: SourceIndex, matches: Matches, word: WordTerms): void {
  const start = postingStart(index, word.terms[0]!);
  const end = start + word.postings;
  const [weight, whole, cls] = [word.weights[0]!, word.wholes[0]!, word.classes[0]!];
  const idf = idfOf(index, word.postings);
  const { docs, scores, outside, typos, stems } = matches;
  let kept = 0;
  for (let j = 0; j < matches.count; j++) {
    const doc = docs[j]!;
    const p = findPosting(index.postingDocs, start, end, doc);
    if (p < 0) continue;
    docs[kept] = doc;
    scores[kept] = scores[j]! + bm25(idf, index.postingTf[p]! * weight, normAt(index, p, doc));
    outside[kept] = outside[j]! + 1 - (whole & index.postingPrimary[p]!);
    typos[kept] = typos[j]! + typosOf(cls);
    stems[kept] = stems[j]! + (cls === STEM ? 1 : 0);
    kept++;
  }
  matches.count = kept;
}

/** A further word, by one pass over its postings that sums tf for the candidates only. */
function filterByPass(index: SourceIndex, scratch: Scratch, matches: Matches, word: WordTerms, checkDeadline: () => void): void {
  const { tf, flag, cls, candidateBits } = scratch;
  candidateBits.fill(0);
  for (let j = 0; j < matches.count; j++) {
    const doc = matches.docs[j]!;
    candidateBits[doc >>> 5]! |= 1 << (doc & 31);
    tf[doc] = 0;
    flag[doc] = 0;
    cls[doc] = NONE;
  }
  keepSummed(index, scratch, matches, sumPostings(index, scratch, word, checkDeadline, candidateBits));
}

/** Every document matching every word, with what the rules need of it. */
export function matchAll(index: SourceIndex, words: readonly WordTerms[], checkDeadline: () => void): Matches {
  const scratch = scratchOf(index);
  // Fewest postings first: the first word's documents are the candidates the others filter.
  const [first, ...rest] = [...words].sort((a, b) => a.postings - b.postings);
  const matches = firstMatches(index, scratch, first!, checkDeadline);
  for (const word of rest) {
    if (matches.count === 0) break;
    if (word.terms.length === 1 && matches.count * SEARCH_OVER_PASS < word.postings) filterByList(index, matches, word);
    else filterByPass(index, scratch, matches, word, checkDeadline);
    checkDeadline();
  }
  return matches;
}
