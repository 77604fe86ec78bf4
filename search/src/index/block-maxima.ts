/**
 * Per-block maxima of the postings, for the ranking's skipping (`../rank/page.ts`): the postings
 * array cut into blocks of BLOCK_POSTINGS, each with the largest `tf / (tf + norm)` of its postings
 * (a bound on any of them in BM25, whatever the word's idf and weight) and whether any of them is
 * in a primary field. A block may straddle two terms' lists; its bounds then hold for both.
 *
 * They are computed when a version's index is opened (one pass over the postings, ~1 s at scale 1),
 * not stored in `search-index.bin`, so the file's format is unchanged; they live on a
 * SharedArrayBuffer like the rest, so the ranking threads read the one copy.
 */
import type { SourceIndex } from './source-index.ts';

export const BLOCK_SHIFT = 6;
export const BLOCK_POSTINGS = 1 << BLOCK_SHIFT;

/** The index's arrays without the maxima computed from them. */
export type IndexArrays = Omit<SourceIndex, 'blockImpact' | 'blockPrimary'>;

export function withBlockMaxima(arrays: IndexArrays): SourceIndex {
  const { postingDocs, postingTf, postingPrimary, norms } = arrays;
  const blocks = (postingDocs.length + BLOCK_POSTINGS - 1) >>> BLOCK_SHIFT;
  const blockImpact = new Float64Array(new SharedArrayBuffer(blocks * 8));
  const blockPrimary = new Uint8Array(new SharedArrayBuffer(blocks));
  for (let p = 0; p < postingDocs.length; p++) {
    const b = p >>> BLOCK_SHIFT;
    const tf = postingTf[p]!;
    const impact = tf / (tf + norms[postingDocs[p]!]!);
    if (impact > blockImpact[b]!) blockImpact[b] = impact;
    blockPrimary[b]! |= postingPrimary[p]!;
  }
  return { ...arrays, blockImpact, blockPrimary };
}
