/**
 * The one walk over a word's postings that marks its documents (the union of its terms' lists) in a
 * bit set, shared by the count (`count.ts`: the matches' bit sets, a word's df) and the exhaustive
 * scoring (`matches.ts`: which documents a word holds, before it sums their tf), and the bit-set
 * helpers both read. A bit set of every document is a few hundred KB, so it stays in the CPU's cache.
 */
import { postingStart, type SourceIndex } from '../index/source-index.ts';
import type { WordTerms } from '../query/word-terms.ts';

/** Postings walked between two deadline checks: well under a millisecond of work. */
export const BLOCK = 1 << 16;

export const hasBit = (bits: Uint32Array, doc: number) => (bits[doc >>> 5]! & (1 << (doc & 31))) !== 0;

/** Marks the word's documents in `bits` (cleared first) and returns how many there are (its df). */
export function markWord(index: SourceIndex, word: WordTerms, bits: Uint32Array, checkDeadline: () => void): number {
  const { postingDocs } = index;
  bits.fill(0);
  let df = 0;
  for (const t of word.terms) {
    const end = index.postingEnds[t]!;
    for (let p = postingStart(index, t); p < end;) {
      const blockEnd = Math.min(end, p + BLOCK);
      for (; p < blockEnd; p++) {
        const doc = postingDocs[p]!;
        const at = doc >>> 5;
        const bit = 1 << (doc & 31);
        if ((bits[at]! & bit) === 0) {
          bits[at]! |= bit;
          df++;
        }
      }
      checkDeadline();
    }
  }
  return df;
}

/** The documents marked in `bits`, in order (`count` of them). */
export function listOf(bits: Uint32Array, count: number): Int32Array {
  const docs = new Int32Array(count);
  let n = 0;
  for (let i = 0; i < bits.length; i++) {
    for (let word = bits[i]!; word !== 0; word &= word - 1) docs[n++] = (i << 5) + (31 - Math.clz32(word & -word));
  }
  return docs;
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
