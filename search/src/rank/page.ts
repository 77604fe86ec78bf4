/**
 * The page of one reading, without scoring every match. The documents are cut into windows of
 * WINDOW documents. From the per-block maxima of the words' postings (`blockImpact`, `blockPrimary`
 * in `../index/posting-extras.ts`) each window gets, without reading a posting, the best key any of
 * its documents could have under the rules of `order.ts`: the fewest typos and stem-only words its
 * terms allow, its best tier (a title of the phrase in it, or a word in a primary field), the fewest
 * words outside the primary fields, and the most BM25 its blocks allow (a word's score in a
 * document is at most idf·(k1+1)·min(1, Σ its terms' block maxima), as tf/(tf+norm) is below 1 and
 * grows slower than the sum of its parts). The windows are then taken best bound first, as buckets
 * of the rules in order; a window is scored exactly, posting by posting, only while its bound could
 * still enter the page, and the first window that cannot ends the search, since every later one is
 * bounded no better. A window's bound mixes its documents (one holds a title, another the best
 * BM25), so once the page is full of titled documents a window is scored for its titled documents
 * alone (`onlyTitled`): on a large source most windows hold some title of a common word, few of
 * them a document that could enter. The page is the exhaustive ranking's: the same documents,
 * keys and scores, summed in the same order (`matches.ts`); `rank.fast.test.ts` checks it.
 */
import { postingStart, type SourceIndex } from '../index/source-index.ts';
import { BLOCK_SHIFT } from '../index/posting-extras.ts';
import type { Reading } from '../query/readings.ts';
import { K1 } from '../query/terms.ts';
import { STEM, typosOf, type WordTerms } from '../query/word-terms.ts';
import { bm25, idfOf } from './bm25.ts';
import { documentFrequency } from './count.ts';
import { scratchOf } from './matches.ts';
import { insertTop, ranksBefore, type RankedDoc } from './order.ts';
import { tierOf, titledDocs, type Titled } from './tier.ts';
import { countWindow, NONE, sumWindow, WINDOW, WINDOW_SHIFT, windowScratchOf, type WindowScratch } from './window.ts';

/** A bound is raised by this much against rounding: the exact sums may differ from it in the last bits. */
const ROUNDING = 1 + 1e-9;

/** What a word's terms allow in each window. */
interface WordBounds {
  readonly present: Uint8Array;
  readonly minClass: Uint8Array;
  readonly maxClass: Uint8Array;
  /** A whole term of the word in a primary field, in some block of the window. */
  readonly primary: Uint8Array;
  /** Σ over the word's terms of their largest block maximum in the window. */
  readonly impact: Float64Array;
}

function boundsOf(index: SourceIndex, word: WordTerms, windows: number): WordBounds {
  const bounds = { present: new Uint8Array(windows), minClass: new Uint8Array(windows).fill(NONE), maxClass: new Uint8Array(windows), primary: new Uint8Array(windows), impact: new Float64Array(windows) };
  const termMax = new Float64Array(windows);
  const touched: number[] = [];
  const { postingDocs, blockImpact, blockPrimary } = index;
  for (let e = 0; e < word.terms.length; e++) {
    const t = word.terms[e]!;
    const [cls, whole] = [word.classes[e]!, word.wholes[e]!];
    const [start, end] = [postingStart(index, t), index.postingEnds[t]!];
    for (let b = start >>> BLOCK_SHIFT; start < end && b <= (end - 1) >>> BLOCK_SHIFT; b++) {
      const from = Math.max(start, b << BLOCK_SHIFT);
      const to = Math.min(end, (b + 1) << BLOCK_SHIFT);
      const [impact, primary] = [blockImpact[b]!, whole & blockPrimary[b]!];
      for (let w = postingDocs[from]! >>> WINDOW_SHIFT; w <= postingDocs[to - 1]! >>> WINDOW_SHIFT; w++) {
        bounds.present[w] = 1;
        if (cls < bounds.minClass[w]!) bounds.minClass[w] = cls;
        if (cls > bounds.maxClass[w]!) bounds.maxClass[w] = cls;
        bounds.primary[w]! |= primary;
        if (impact > termMax[w]!) {
          if (termMax[w] === 0) touched.push(w);
          termMax[w] = impact;
        }
      }
    }
    for (const w of touched) {
      bounds.impact[w]! += termMax[w]!;
      termMax[w] = 0;
    }
    touched.length = 0;
  }
  return bounds;
}

/** A window's best possible key, as a ranked document (its first document stands for the tie order). */
function windowBound(w: number, reading: Reading, words: readonly WordBounds[], idfs: readonly number[], titledWindows: Uint8Array): RankedDoc | undefined {
  let [typos, outside, stems, score] = [reading.typos, 0, 0, 0];
  for (let i = 0; i < words.length; i++) {
    const bounds = words[i]!;
    if (!bounds.present[w]) return undefined;
    typos += typosOf(bounds.minClass[w]!);
    outside += 1 - bounds.primary[w]!;
    if (bounds.minClass[w] === STEM && bounds.maxClass[w] === STEM) stems++;
    score += idfs[i]! * (K1 + 1) * Math.min(1, bounds.impact[w]!);
  }
  const titled = titledWindows[w]!;
  const tier = titled ? titled - 1 : outside === 0 ? 2 : 3;
  return { doc: w << WINDOW_SHIFT, typos, tier, outside, stems, score: score * ROUNDING };
}

/** Per window: 1 when a title equals the phrase in it, 2 when one starts with it, else 0. */
function titledWindowsOf(titled: Titled, windows: number): Uint8Array {
  const marks = new Uint8Array(windows);
  const wordsPerWindow = WINDOW >>> 5;
  for (let w = 0; w < windows; w++) {
    for (let i = w * wordsPerWindow; i < (w + 1) * wordsPerWindow && i < titled.bits.length; i++) {
      if (titled.bits[i] !== 0) {
        marks[w] = 2;
        break;
      }
    }
  }
  for (const doc of titled.exact) marks[doc >>> WINDOW_SHIFT] = 1;
  return marks;
}

/**
 * Scores the window's matches exactly and offers each to the page; returns how many there are.
 * With `only`, a bit set of documents, the others are not summed: the caller knows they cannot
 * enter the page, and does not need the count.
 */
function scoreWindow(index: SourceIndex, s: WindowScratch, reading: Reading, ordered: readonly WordTerms[], idfs: readonly number[], titled: Titled, w: number, top: RankedDoc[], limit: number, only?: Uint32Array): number {
  const lo = w << WINDOW_SHIFT;
  const { tf, norm, score, outside, typos, stems, flag, words, cls: classes } = s;
  s.words.fill(0);
  s.cls.fill(NONE);
  let reached = 0;
  for (let i = 0; i < ordered.length; i++) {
    [s.prev, s.seen] = [s.seen, s.prev];
    reached = sumWindow(index, s, ordered[i]!, i, lo, s.prev, reached, only);
    const { seen } = s;
    const idf = idfs[i]!;
    for (let j = 0; j < reached; j++) {
      const d = seen[j]!;
      const cls = classes[d]!;
      const part = bm25(idf, tf[d]!, norm[d]!);
      score[d] = i === 0 ? part : score[d]! + part;
      outside[d] = (i === 0 ? 0 : outside[d]!) + 1 - flag[d]!;
      typos[d] = (i === 0 ? 0 : typos[d]!) + typosOf(cls);
      stems[d] = (i === 0 ? 0 : stems[d]!) + (cls === STEM ? 1 : 0);
      words[d] = i + 1;
      classes[d] = NONE;
    }
    if (reached === 0) return 0;
  }
  // One candidate object reused: a match that cannot enter the full page is never allocated.
  const candidate = { doc: 0, typos: 0, tier: 0, outside: 0, stems: 0, score: 0 };
  for (let j = 0; j < reached; j++) {
    const d = s.seen[j]!;
    candidate.doc = lo + d;
    candidate.outside = outside[d]!;
    candidate.typos = reading.typos + typos[d]!;
    candidate.tier = tierOf(titled, candidate.doc, candidate.outside);
    candidate.stems = stems[d]!;
    candidate.score = score[d]!;
    if (top.length < limit || ranksBefore(candidate, top[limit - 1]!)) insertTop(top, { ...candidate }, limit);
  }
  return reached;
}

/** The reading's page, best first, and with `counting` the number of its matches (else 0). */
export interface ReadingPage {
  readonly docs: RankedDoc[];
  readonly total: number;
}

/**
 * The titles' bit set when only a titled document of the window can still enter the page: the
 * page is full, its last is titled (tier 0 or 1), and it has no more typos than any document of the
 * window can have (`bound`, the window's best key), so an untitled document (tier 2 or 3) ranks
 * after it. Undefined when every match must be summed: for the count, or while that is not so.
 */
function onlyTitled(bound: RankedDoc, top: readonly RankedDoc[], limit: number, counting: boolean, titled: Titled): Uint32Array | undefined {
  if (counting || top.length < limit) return undefined;
  const last = top[limit - 1]!;
  return last.tier <= 1 && last.typos <= bound.typos ? titled.bits : undefined;
}

/**
 * The reading's page: its best `limit` matches, best first, as `order.ts` ranks them. With
 * `counting`, also their number: the windows scored counted theirs, and the windows the page did
 * not need (those where some word has no posting hold none) are counted without scoring.
 */
export function pageOf(index: SourceIndex, reading: Reading, limit: number, checkDeadline: () => void, counting = false): ReadingPage {
  // The words in the order `matchAll` sums their scores, so every score is the same to the last bit.
  const ordered = [...reading.words].sort((a, b) => a.postings - b.postings);
  const idfs = ordered.map((word) => idfOf(index, documentFrequency(index, word, checkDeadline)));
  const windows = (index.documents >>> WINDOW_SHIFT) + 1;
  const bounds = ordered.map((word) => boundsOf(index, word, windows));
  checkDeadline();
  const titled = titledDocs(index, scratchOf(index).titleBits, reading.phrase);
  const titledWindows = titledWindowsOf(titled, windows);
  const candidates: RankedDoc[] = [];
  for (let w = 0; w < windows; w++) {
    const bound = windowBound(w, reading, bounds, idfs, titledWindows);
    if (bound) candidates.push(bound);
  }
  candidates.sort((a, b) => (ranksBefore(a, b) ? -1 : ranksBefore(b, a) ? 1 : 0));
  const top: RankedDoc[] = [];
  const s = windowScratchOf();
  let [scored, total] = [0, 0];
  for (; scored < candidates.length; scored++) {
    const bound = candidates[scored]!;
    if (top.length === limit && !ranksBefore(bound, top[limit - 1]!)) break;
    total += scoreWindow(index, s, reading, ordered, idfs, titled, bound.doc >>> WINDOW_SHIFT, top, limit, onlyTitled(bound, top, limit, counting, titled));
    checkDeadline();
  }
  for (let k = scored; counting && k < candidates.length; k++) {
    total += countWindow(index, s, ordered, candidates[k]!.doc >>> WINDOW_SHIFT);
    checkDeadline();
  }
  return { docs: top, total: counting ? total : 0 };
}
