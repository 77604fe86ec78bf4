/** `@uda/search/rank`: a stored lookup's ranked page and exact total over a source's index. */
export { rankDocuments, rankDocumentsExhaustive, rankDocumentsPaged } from './rank.ts';
export type { RankedDoc, Ranking } from './rank.ts';
