/**
 * The names of the index tables the exporter writes into `service.db`. Their prefix is the
 * catalog's (`SEARCH_TABLE_PREFIX`): no catalog table has it, so they are not billed and SQL may not
 * read them.
 */
import { SEARCH_TABLE_PREFIX } from '@uda/shared/catalog';

export type SearchTableKind = 'docs' | 'postings' | 'titles' | 'stats' | 'idterms';

/** `_search_gutenberg_postings` and so on: one set of index tables per stored source. */
export function searchTable(source: string, kind: SearchTableKind): string {
  return `${SEARCH_TABLE_PREFIX}${source}_${kind}`;
}
