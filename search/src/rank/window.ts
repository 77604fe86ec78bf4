/**
 * One window of documents (`page.ts`) read exactly: its postings summed per document into scratch
 * arrays of the window's size, which stay in the CPU's cache however large the source, or only
 * counted. A window's postings of a term are found by binary search in the term's list.
 */
import { postingStart, type SourceIndex } from '../index/source-index.ts';
import { normAt } from '../index/posting-extras.ts';
import type { WordTerms } from '../query/word-terms.ts';
import { SEARCH_OVER_PASS } from './matches.ts';
import { findPosting, hasBit } from './postings.ts';

export const WINDOW_SHIFT = 12;
export const WINDOW = 1 << WINDOW_SHIFT;
export const NONE = 255;

/** Per-window scratch, indexed by `doc − window start`. */
export interface WindowScratch {
  readonly words: Uint8Array;
  readonly score: Float64Array;
  readonly outside: Uint8Array;
  readonly typos: Uint8Array;
  readonly stems: Uint8Array;
  readonly tf: Float64Array;
  /** The document's BM25 norm, read beside its first posting (`normAt`). */
  readonly norm: Float64Array;
  readonly flag: Uint8Array;
  readonly cls: Uint8Array;
  seen: Int32Array;
  prev: Int32Array;
}

/** One per thread: the ranking is synchronous, so two lookups never use it at once. */
let windowScratch: WindowScratch | undefined;

export const windowScratchOf = (): WindowScratch => (windowScratch ??= {
  words: new Uint8Array(WINDOW), score: new Float64Array(WINDOW), outside: new Uint8Array(WINDOW), typos: new Uint8Array(WINDOW),
  stems: new Uint8Array(WINDOW), tf: new Float64Array(WINDOW), norm: new Float64Array(WINDOW), flag: new Uint8Array(WINDOW), cls: new Uint8Array(WINDOW), seen: new Int32Array(WINDOW), prev: new Int32Array(WINDOW),
});

/** The first position in `[from, to)` of a sorted list whose document is `doc` or later. */
function firstAtOrAfter(docs: Int32Array, from: number, to: number, doc: number): number {
  let [low, high] = [from, to];
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (docs[middle]! < doc) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Adds posting `p` of a term to document `lo + d`'s sums for the word; lists `d` in `seen` the first time. */
function addPosting(index: SourceIndex, s: WindowScratch, p: number, d: number, lo: number, weight: number, whole: number, c: number, reached: number): number {
  if (s.cls[d] === NONE) {
    s.seen[reached++] = d;
    s.tf[d] = 0;
    s.flag[d] = 0;
    s.norm[d] = normAt(index, p, lo + d);
  }
  s.tf[d]! += index.postingTf[p]! * weight;
  s.flag[d]! |= whole & index.postingPrimary[p]!;
  if (c < s.cls[d]!) s.cls[d] = c;
  return reached;
}

/**
 * Sums word `i`'s postings in the window for the documents that hold the words before it (`prev`,
 * `candidates` of them; all for the first word), as `matches.ts` does for every document: by a pass
 * over the term's postings in the window, or by binary search for each candidate when they are few
 * against them; with `only`, for the documents in that bit set alone. Returns how many documents it
 * reached (listed in `seen`).
 */
export function sumWindow(index: SourceIndex, s: WindowScratch, word: WordTerms, i: number, lo: number, prev: Int32Array, candidates: number, only?: Uint32Array): number {
  const { postingDocs } = index;
  let reached = 0;
  for (let e = 0; e < word.terms.length; e++) {
    const t = word.terms[e]!;
    const [weight, whole, c] = [word.weights[e]!, word.wholes[e]!, word.classes[e]!];
    const end = index.postingEnds[t]!;
    const from = firstAtOrAfter(postingDocs, postingStart(index, t), end, lo);
    const to = firstAtOrAfter(postingDocs, from, end, lo + WINDOW);
    if (i > 0 && candidates * SEARCH_OVER_PASS < to - from) {
      for (let j = 0; j < candidates; j++) {
        const p = findPosting(postingDocs, from, to, lo + prev[j]!);
        if (p >= 0) reached = addPosting(index, s, p, prev[j]!, lo, weight, whole, c, reached);
      }
      continue;
    }
    for (let p = from; p < to; p++) {
      const d = postingDocs[p]! - lo;
      if (s.words[d] === i && (!only || hasBit(only, lo + d))) reached = addPosting(index, s, p, d, lo, weight, whole, c, reached);
    }
  }
  return reached;
}


/** How many documents of window `w` hold every word, without sums: one mark per posting in the window. */
export function countWindow(index: SourceIndex, s: WindowScratch, ordered: readonly WordTerms[], w: number): number {
  const lo = w << WINDOW_SHIFT;
  const { words } = s;
  const { postingDocs } = index;
  words.fill(0);
  let count = 0;
  ordered.forEach((word, i) => {
    const last = i === ordered.length - 1;
    for (const t of word.terms) {
      const end = index.postingEnds[t]!;
      const from = firstAtOrAfter(postingDocs, postingStart(index, t), end, lo);
      const to = firstAtOrAfter(postingDocs, from, end, lo + WINDOW);
      for (let p = from; p < to; p++) {
        const d = postingDocs[p]! - lo;
        if (words[d] !== i) continue;
        words[d] = i + 1;
        if (last) count++;
      }
    }
  });
  return count;
}

