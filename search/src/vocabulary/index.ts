/**
 * `@uda/search/vocabulary`: how text becomes terms, the same in DuckDB SQL (the exporter's index,
 * a sheet's rows) and in TypeScript (a query's keywords), and a term's English stem.
 */
export { searchTerms, searchTermsSql } from './terms.ts';
export { compareUtf8, stemOf, stemPhrase } from './stems.ts';
