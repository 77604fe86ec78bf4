/**
 * What a source's search index is made of (`SEARCH_SPECS` in `specs.ts` lists them): the
 * documents, their fields with their BM25 weights, the tie order and the titles.
 */

/** BM25 parameters (the usual defaults, as in Lucene and DuckDB's `fts`). */
export const BM25 = { k1: 1.2, b: 0.75 } as const;

export interface SearchField {
  readonly column: string;
  readonly weight: number;
  /** A whole-word match here ranks ahead of matches elsewhere (the lookup's "tier 2"). */
  readonly primary?: boolean;
  /**
   * False: the field's terms are found but do not lengthen the document in BM25 (a company's
   * share classes do not make its name count for less than a one-class company's).
   */
  readonly counted?: boolean;
  /** An identifier (a ticker, an arXiv id): its terms get no typos. */
  readonly id?: boolean;
}

export interface SearchSpec {
  readonly source: string;
  /** Source tables the documents read; the index is skipped when one was not built. */
  readonly tables: readonly string[];
  /** A SELECT with the key columns and one text column per field. */
  readonly documents: string;
  /** Tie order among equally ranked documents. */
  readonly order: string;
  /** Columns kept in `docs` to join a page back to the source tables. */
  readonly keys: readonly string[];
  /** The page columns kept in `docs`: a SELECT with the key columns and one column per page column. */
  readonly pageColumns?: string;
  readonly fields: readonly SearchField[];
  /** Fields whose whole text is compared with the keywords for exact and prefix matches. */
  readonly titles: readonly string[];
  /** List fields each of whose items is compared so (a company's tickers). */
  readonly titleLists?: readonly string[];
}
