/** `@uda/search/query`: a query's words and how forgiving their matching is (typos, splits, prefixes, dropped words). */
export { AS_TYPED, FORGIVING, isStopWord, K1, MAX_TERMS, matchesAsPrefix, MIN_PREFIX, parseQuery, PREFIX_WEIGHT, queryTerms, titlePhrase, typoBudget } from './terms.ts';
export type { MatchRules, ParsedQuery } from './terms.ts';
export { typoMatches, typoWalk } from './typos.ts';
