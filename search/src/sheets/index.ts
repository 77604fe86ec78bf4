/** `@uda/search/sheets`: the words a connected sheet's search accepts, and the SQL pieces that rank its rows. */
export { distanceSql, likePattern, sheetWordTerms } from './sheet-search.ts';
export type { WordTerms } from './sheet-search.ts';
