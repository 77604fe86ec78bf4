/**
 * The documents matching every word of a reading, with what the ranking rules need of each: its
 * BM25 score, typos, words matched outside the primary fields and words matched only by stem. Only
 * the postings of the words' terms are read, so the work follows their number, not the table size.
 *
 * The rarest word's documents are the candidates; each further word filters them, by binary search
 * in its list when it is one long list against few candidates, else by marking its documents in a
 * bit set (`markWord`, which also counts its df) and one pass over its postings that sums tf for
 * the candidates (`sumPostings`). Bit sets of every document are a few hundred KB, so they stay in
 * the CPU's cache. The scratch arrays are per index and per thread (the ranking is synchronous, so lookups
 * never share them concurrently); `checkDeadline` is called between blocks of postings.
 */
import { postingStart, type SourceIndex } from '../index/source-index.ts';
import { normAt } from '../index/posting-extras.ts';
import { STEM, typosOf, type WordTerms } from '../query/word-terms.ts';
import { bm25, idfOf } from './bm25.ts';
import { BLOCK, findPosting, hasBit, listOf, markWord } from './postings.ts';

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

/**
 * For the candidates (every document of the word when `candidates` is undefined), sums the
 * weighted tf, flags a whole-word term in a primary field and keeps the closest class. The word's
 * documents were marked first (`markWord`), which also gave its df.
 */
function sumPostings(index: SourceIndex, scratch: Scratch, word: WordTerms, checkDeadline: () => void, candidates?: Uint32Array): void {
  const { tf, flag, cls } = scratch;
  const { postingDocs, postingTf, postingPrimary } = index;
  for (let e = 0; e < word.terms.length; e++) {
    const t = word.terms[e]!;
    const [weight, whole, c] = [word.weights[e]!, word.wholes[e]!, word.classes[e]!];
    const end = index.postingEnds[t]!;
    for (let p = postingStart(index, t); p < end;) {
      const blockEnd = Math.min(end, p + BLOCK);
      for (; p < blockEnd; p++) {
        const doc = postingDocs[p]!;
        if (candidates && !hasBit(candidates, doc)) continue;
        tf[doc]! += postingTf[p]! * weight;
        flag[doc]! |= whole & postingPrimary[p]!;
        if (c < cls[doc]!) cls[doc] = c;
      }
      checkDeadline();
    }
  }
}

/** Starts the sums of `docs` (the first `count`) at nothing. */
function clearSums(scratch: Scratch, docs: Int32Array, count: number): void {
  for (let j = 0; j < count; j++) {
    const doc = docs[j]!;
    scratch.tf[doc] = 0;
    scratch.flag[doc] = 0;
    scratch.cls[doc] = NONE;
  }
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
  const count = markWord(index, word, scratch.termBits, checkDeadline);
  const docs = listOf(scratch.termBits, count);
  clearSums(scratch, docs, count);
  sumPostings(index, scratch, word, checkDeadline);
  const matches: Matches = {
    count, docs, scores: new Float64Array(count), outside: new Uint8Array(count), typos: new Uint8Array(count), stems: new Uint8Array(count),
  };
  keepSummed(index, scratch, matches, count);
  return matches;
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
  const { candidateBits } = scratch;
  candidateBits.fill(0);
  for (let j = 0; j < matches.count; j++) candidateBits[matches.docs[j]! >>> 5]! |= 1 << (matches.docs[j]! & 31);
  clearSums(scratch, matches.docs, matches.count);
  const df = markWord(index, word, scratch.termBits, checkDeadline);
  sumPostings(index, scratch, word, checkDeadline, candidateBits);
  keepSummed(index, scratch, matches, df);
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
