/** `@uda/shared/duckdb`: the one DuckDB lock-down and the one interrupt deadline. */
export { lockDown, lockedInstanceOptions, quoteIdent, quoteLiteral } from './lockdown.ts';
export type { EngineLimits } from './lockdown.ts';
export { DeadlineExceeded, withDeadline } from './deadline.ts';
export { sanitizeEngineMessage } from './engine-text.ts';
