/**
 * BM25, field-weighted: the exporter folds the field weights into each posting's `tf` and k1 and b
 * into each document's `norm` (`../index/tables-sql.ts`), so a term's score in a document is one
 * division. A word matching several terms (a prefix, its stems, its typos) sums their weighted tf
 * per document and counts as one term whose document frequency is the union's.
 */
import type { SourceIndex } from '../index/source-index.ts';
import { K1 } from '../query/terms.ts';

/** The BM25 of one word in one document. */
export const bm25 = (idf: number, tf: number, norm: number): number => (idf * tf * (K1 + 1)) / (tf + norm);

export const idfOf = (index: SourceIndex, df: number): number => Math.log(1 + (index.documents - df + 0.5) / (df + 0.5));
