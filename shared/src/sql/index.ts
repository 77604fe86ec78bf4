/** `@uda/shared/sql`: the SQL validator, DuckDB's parser, and billing by source. */
export { MAX_SQL_LENGTH, ONLY_SELECT_MESSAGE, checkSqlText, disallowedOperation } from './text-rules.ts';
export type { TextCheck } from './text-rules.ts';
export { createSqlParser } from './parser.ts';
export type { ParseResult, QueryReferences, SqlParser, TableReference } from './parser.ts';
export { refusedReference, validateSql } from './validate.ts';
export { allowedFunctionNames, allowedTableFunctionNames } from './allow-list.ts';
export type { Validation } from './validate.ts';
export { billedSource, rowsBySource, sourcesOfTables } from './billing.ts';
