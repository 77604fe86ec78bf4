/**
 * Arrays the ranking reads beside the index's own, derived from them when a version's index is
 * opened (one pass over the postings), not stored in `search-index.bin`, so the file's format is
 * unchanged. They live on SharedArrayBuffers like the rest, so the ranking threads read one copy.
 *
 * - Per-block maxima, for the ranking's skipping (`../rank/page.ts`): the postings array cut into
 *   blocks of BLOCK_POSTINGS, each with the largest `tf / (tf + norm)` of its postings (a bound on
 *   any of them in BM25, whatever the word's idf and weight) and whether any of them is in a primary
 *   field. A block may straddle two terms' lists; its bounds then hold for both.
 * - Per posting, its document's BM25 norm as a one-byte code into `normTable`. A document's norm
 *   follows its length, so a source has a few hundred distinct norms at most; reading the norm beside
 *   the posting is a sequential read, where `norms[doc]` is a cache miss per posting on a large
 *   source (2 M documents' norms are 16 MB). The ESCAPE code stands for a norm outside the table:
 *   `norms[doc]` is read then, so the value is always the document's own, to the last bit.
 */
import type { SourceIndex } from './index-arrays.ts';

export const BLOCK_SHIFT = 6;
export const BLOCK_POSTINGS = 1 << BLOCK_SHIFT;
/** The norm code of a posting whose norm is not in the table. */
export const ESCAPE = 255;

/** The index's arrays without those derived from them here. */
export type IndexArrays = Omit<SourceIndex, 'blockImpact' | 'blockPrimary' | 'postingNorms' | 'normTable'>;

/** The most frequent norms of the documents, at most ESCAPE of them, and each document's code. */
function normCodes(norms: Float64Array): { normTable: Float64Array; docCodes: Uint8Array } {
  const counts = new Map<number, number>();
  for (let doc = 1; doc < norms.length; doc++) counts.set(norms[doc]!, (counts.get(norms[doc]!) ?? 0) + 1);
  const kept = [...counts].sort((a, b) => b[1] - a[1]).slice(0, ESCAPE).map(([norm]) => norm);
  const normTable = new Float64Array(new SharedArrayBuffer((ESCAPE + 1) * 8));
  normTable.set(kept);
  const codeOf = new Map(kept.map((norm, code) => [norm, code]));
  const docCodes = new Uint8Array(norms.length);
  for (let doc = 0; doc < norms.length; doc++) docCodes[doc] = codeOf.get(norms[doc]!) ?? ESCAPE;
  return { normTable, docCodes };
}

export function withPostingExtras(arrays: IndexArrays): SourceIndex {
  const { postingDocs, postingTf, postingPrimary, norms } = arrays;
  const blocks = (postingDocs.length + BLOCK_POSTINGS - 1) >>> BLOCK_SHIFT;
  const blockImpact = new Float64Array(new SharedArrayBuffer(blocks * 8));
  const blockPrimary = new Uint8Array(new SharedArrayBuffer(blocks));
  const postingNorms = new Uint8Array(new SharedArrayBuffer(postingDocs.length));
  const { normTable, docCodes } = normCodes(norms);
  for (let p = 0; p < postingDocs.length; p++) {
    const b = p >>> BLOCK_SHIFT;
    const [doc, tf] = [postingDocs[p]!, postingTf[p]!];
    const impact = tf / (tf + norms[doc]!);
    if (impact > blockImpact[b]!) blockImpact[b] = impact;
    blockPrimary[b]! |= postingPrimary[p]!;
    postingNorms[p] = docCodes[doc]!;
  }
  return { ...arrays, blockImpact, blockPrimary, postingNorms, normTable };
}

/** The BM25 norm of posting `p`'s document `doc`, read beside the posting unless its code is ESCAPE. */
export function normAt(index: SourceIndex, p: number, doc: number): number {
  const code = index.postingNorms[p]!;
  return code === ESCAPE ? index.norms[doc]! : index.normTable[code]!;
}
