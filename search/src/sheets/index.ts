/** `@uda/search/sheets`: the words a connected sheet's search accepts, and the ranking of its rows. */
export { likePattern, rankSheetRows, sheetWordTerms } from './sheet-search.ts';
export type { SheetTermIndex, WordTerms } from './sheet-search.ts';
