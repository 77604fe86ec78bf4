/**
 * The shape of one source's in-memory index: the arrays `source-index.ts` builds from the tables
 * (its header states their layout) and those `posting-extras.ts` derives from them.
 */
import type { SortedTexts } from './sorted-texts.ts';

export interface SourceIndex {
  readonly documents: number;
  readonly terms: SortedTexts;
  readonly postingEnds: Uint32Array;
  readonly postingDocs: Int32Array;
  readonly postingTf: Float32Array;
  readonly postingPrimary: Uint8Array;
  /** Indexed by `doc` (1 to `documents`). */
  readonly norms: Float64Array;
  /** Per term: 1 when it is found only in id fields (a ticker, an arXiv id), which get no typos. */
  readonly idTerms: Uint8Array;
  readonly stems: SortedTexts;
  readonly stemEnds: Uint32Array;
  readonly stemTerms: Int32Array;
  /** The primary texts with each term stemmed. */
  readonly titles: SortedTexts;
  readonly titleDocs: Int32Array;
  /** Per block of postings (`posting-extras.ts`): the largest `tf / (tf + norm)`, and whether any is in a primary field. */
  readonly blockImpact: Float64Array;
  readonly blockPrimary: Uint8Array;
  /** Per posting (`posting-extras.ts`): its document's norm as a code into `normTable`. */
  readonly postingNorms: Uint8Array;
  readonly normTable: Float64Array;
}
