/** `@uda/shared/duckdb`: the one DuckDB lock-down, the one interrupt deadline and the one JSON conversion of values. */
export { jsonValue } from './json-values.ts';
export { lockDown, lockedInstanceOptions, quoteIdent, quoteLiteral } from './lockdown.ts';
export type { EngineLimits } from './lockdown.ts';
export { DeadlineExceeded, withDeadline } from './deadline.ts';
export { OUT_OF_MEMORY_MESSAGE, sanitizeEngineMessage } from './engine-text.ts';
export { writeParquetRows } from './parquet-rows.ts';
export type { ParquetColumn, ParquetColumnType } from './parquet-rows.ts';
