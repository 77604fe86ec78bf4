/**
 * The functions and relations a query may name. It is an allow-list, read from DuckDB's
 * own parse of the query (`json_serialize_sql`), so what we check is what the engine will run:
 * a name not listed here is refused, whatever new function a DuckDB upgrade brings.
 *
 * The lists were taken from `duckdb_functions()` of the pinned DuckDB and then reviewed: left out
 * are everything that reads or changes engine state (settings, variables, sequences, the random
 * seed, the parser, logging, checkpoints), shows the engine's own catalog, paths, version or
 * connection, sleeps, or runs SQL text (`query`, `json_execute_serialized_sql`). The escape corpus
 * (`query-runner/src/sandbox.escape.test.ts`) enumerates every table function and setting reader
 * of the engine and proves each one refused or harmless.
 */

/** Scalar functions and operators (operators reach the parse tree as functions named `+`, `~~`, …). */
const SCALAR = [
  '!~~', '!~~*', '%', '&', '&&', '*', '**', '+', '-', '->>', '/', '//', '<->', '<<', '<=>', '<@', '>>', '@',
  '@>', '^', '^@', 'abs', 'acos', 'acosh', 'add', 'age', 'aggregate', 'alias', 'apply', 'array_aggr',
  'array_aggregate', 'array_apply', 'array_cat', 'array_concat', 'array_contains', 'array_cosine_distance',
  'array_cosine_similarity', 'array_cross_product', 'array_distance', 'array_distinct', 'array_dot_product',
  'array_extract', 'array_filter', 'array_grade_up', 'array_has', 'array_has_all', 'array_has_any',
  'array_indexof', 'array_inner_product', 'array_intersect', 'array_length', 'array_negative_dot_product',
  'array_negative_inner_product', 'array_position', 'array_reduce', 'array_resize', 'array_reverse_sort',
  'array_select', 'array_slice', 'array_sort', 'array_to_json', 'array_transform', 'array_unique',
  'array_value', 'array_where', 'array_zip', 'ascii', 'asin', 'asinh', 'atan', 'atan2', 'atanh', 'bar',
  'base64', 'bin', 'bit_count', 'bit_length', 'bit_position', 'bitstring', 'can_cast_implicitly',
  'cardinality', 'cast_to_type', 'cbrt', 'ceil', 'ceiling', 'century', 'char_length', 'character_length',
  'chr', 'concat', 'concat_ws', 'contains', 'cos', 'cosh', 'cot', 'create_sort_key', 'current_database',
  'current_date', 'current_localtime', 'current_localtimestamp', 'current_query', 'current_schema',
  'current_schemas', 'damerau_levenshtein', 'date_diff', 'date_part', 'date_sub', 'date_trunc', 'datediff',
  'datepart', 'datesub', 'datetrunc', 'day', 'dayname', 'dayofmonth', 'dayofweek', 'dayofyear', 'decade',
  'decode', 'degrees', 'divide', 'editdist3', 'element_at', 'encode', 'ends_with', 'enum_code', 'enum_first',
  'enum_last', 'enum_range', 'enum_range_boundary', 'epoch', 'epoch_ms', 'epoch_ns', 'epoch_us',
  'equi_width_bins', 'era', 'even', 'exp', 'factorial', 'filter', 'flatten', 'floor', 'format',
  'formatReadableDecimalSize', 'formatReadableSize', 'format_bytes', 'from_base64', 'from_binary',
  'from_hex', 'from_json', 'from_json_strict', 'gamma', 'gcd', 'gen_random_uuid', 'generate_series',
  'get_bit', 'get_current_time', 'get_current_timestamp', 'get_type', 'grade_up', 'greatest',
  'greatest_common_divisor', 'hamming', 'hash', 'hex', 'hour', 'ilike_escape', 'instr',
  'is_histogram_other_bin', 'isfinite', 'isinf', 'isnan', 'isodow', 'isoyear', 'jaccard', 'jaro_similarity',
  'jaro_winkler_similarity', 'json_array', 'json_array_length', 'json_contains', 'json_exists',
  'json_extract', 'json_extract_path', 'json_extract_path_text', 'json_extract_string', 'json_keys',
  'json_merge_patch', 'json_object', 'json_pretty', 'json_quote', 'json_structure', 'json_transform',
  'json_transform_strict', 'json_type', 'json_valid', 'json_value', 'julian', 'last_day', 'lcase', 'lcm',
  'least', 'least_common_multiple', 'left', 'left_grapheme', 'len', 'length', 'length_grapheme',
  'levenshtein', 'lgamma', 'like_escape', 'list_aggr', 'list_aggregate', 'list_apply', 'list_cat',
  'list_concat', 'list_contains', 'list_cosine_distance', 'list_cosine_similarity', 'list_distance',
  'list_distinct', 'list_dot_product', 'list_element', 'list_extract', 'list_filter', 'list_grade_up',
  'list_has', 'list_has_all', 'list_has_any', 'list_indexof', 'list_inner_product', 'list_intersect',
  'list_negative_dot_product', 'list_negative_inner_product', 'list_pack', 'list_position', 'list_reduce',
  'list_resize', 'list_reverse_sort', 'list_select', 'list_slice', 'list_sort', 'list_transform',
  'list_unique', 'list_value', 'list_where', 'list_zip', 'ln', 'log', 'log10', 'log2', 'lower', 'lpad',
  'ltrim', 'make_date', 'make_time', 'make_timestamp', 'make_timestamp_ms', 'make_timestamp_ns',
  'make_timestamptz', 'make_type', 'map', 'map_concat', 'map_contains', 'map_entries', 'map_extract',
  'map_extract_value', 'map_from_entries', 'map_keys', 'map_values', 'md5', 'md5_number', 'microsecond',
  'millennium', 'millisecond', 'minute', 'mismatches', 'mod', 'month', 'monthname', 'multiply', 'nanosecond',
  'nextafter', 'nfc_normalize', 'normalized_interval', 'not_ilike_escape', 'not_like_escape', 'now',
  'octet_length', 'ord', 'parse_dirname', 'parse_dirpath', 'parse_filename', 'parse_formatted_bytes',
  'parse_path', 'pi', 'position', 'pow', 'power', 'prefix', 'printf', 'quarter', 'radians', 'random',
  'range', 'reduce', 'regexp_escape', 'regexp_extract', 'regexp_extract_all', 'regexp_full_match',
  'regexp_matches', 'regexp_replace', 'regexp_split_to_array', 'remap_struct', 'repeat', 'replace',
  'replace_type', 'reverse', 'right', 'right_grapheme', 'round', 'row', 'row_to_json', 'rpad', 'rtrim',
  'second', 'set_bit', 'sha1', 'sha256', 'sign', 'signbit', 'sin', 'sinh', 'split', 'sqrt', 'starts_with',
  'str_split', 'str_split_regex', 'strftime', 'string_split', 'string_split_regex', 'string_to_array',
  'strip_accents', 'strlen', 'strpos', 'strptime', 'struct_concat', 'struct_contains', 'struct_extract',
  'struct_extract_at', 'struct_has', 'struct_indexof', 'struct_insert', 'struct_keys', 'struct_pack',
  'struct_position', 'struct_update', 'struct_values', 'substr', 'substring', 'substring_grapheme',
  'subtract', 'suffix', 'switch', 'tan', 'tanh', 'time_bucket', 'timezone', 'timezone_hour',
  'timezone_minute', 'to_base', 'to_base64', 'to_binary', 'to_centuries', 'to_days', 'to_decades', 'to_hex',
  'to_hours', 'to_json', 'to_microseconds', 'to_millennia', 'to_milliseconds', 'to_minutes', 'to_months',
  'to_quarters', 'to_seconds', 'to_timestamp', 'to_weeks', 'to_years', 'today', 'transaction_timestamp',
  'translate', 'trim', 'trunc', 'try_strptime', 'typeof', 'ucase', 'unbin', 'unhex', 'unicode',
  'union_extract', 'union_tag', 'union_value', 'unpivot_list', 'upper', 'url_decode', 'url_encode', 'uuid',
  'uuid_extract_timestamp', 'uuid_extract_version', 'uuidv4', 'uuidv7', 'week', 'weekday', 'weekofyear',
  'xor', 'year', 'yearweek', '|', '||', '~', '~~', '~~*', '~~~',
  // Parsed as functions but not listed by duckdb_functions() as scalars.
  'unnest', 'grouping', 'grouping_id',
] as const;

/** DuckDB's built-in macros that compute on their arguments only. */
const MACROS = [
  'ago', 'array_append', 'array_pop_back', 'array_pop_front', 'array_prepend', 'array_push_back',
  'array_push_front', 'array_reverse', 'array_to_string', 'array_to_string_comma_default',
  'current_database', 'current_query', 'current_schema', 'date_add', 'days_in_month', 'fdiv', 'fmod',
  'generate_subscripts', 'geomean', 'geometric_mean', 'json', 'json_group_array', 'json_group_object',
  'json_group_structure', 'list_any_value', 'list_append', 'list_approx_count_distinct', 'list_avg',
  'list_bit_and', 'list_bit_or', 'list_bit_xor', 'list_bool_and', 'list_bool_or', 'list_count',
  'list_entropy', 'list_first', 'list_histogram', 'list_kurtosis', 'list_kurtosis_pop', 'list_last',
  'list_mad', 'list_max', 'list_median', 'list_min', 'list_mode', 'list_prepend', 'list_product',
  'list_reverse', 'list_sem', 'list_skewness', 'list_stddev_pop', 'list_stddev_samp', 'list_string_agg',
  'list_sum', 'list_var_pop', 'list_var_samp', 'map_contains_entry', 'map_contains_value',
  'md5_number_lower', 'md5_number_upper', 'nullif', 'regexp_split_to_table', 'round_even', 'roundbankers',
  'split_part', 'wavg', 'weighted_avg',
] as const;

/** Aggregate and window functions. Whole-table aggregates (`list`, `string_agg`) are bounded by the cell cap. */
const AGGREGATES = [
  'any_value', 'approx_count_distinct', 'approx_quantile', 'approx_top_k', 'arbitrary', 'arg_max',
  'arg_max_null', 'arg_max_nulls_last', 'arg_min', 'arg_min_null', 'arg_min_nulls_last', 'argmax', 'argmin',
  'array_agg', 'avg', 'bit_and', 'bit_or', 'bit_xor', 'bitstring_agg', 'bool_and', 'bool_or', 'corr',
  'count', 'count_if', 'count_star', 'countif', 'covar_pop', 'covar_samp', 'cume_dist', 'dense_rank',
  'entropy', 'favg', 'fill', 'first', 'first_value', 'fsum', 'group_concat', 'histogram', 'histogram_exact',
  'kahan_sum', 'kurtosis', 'kurtosis_pop', 'lag', 'last', 'last_value', 'lead', 'list', 'listagg', 'mad',
  'max', 'max_by', 'mean', 'median', 'min', 'min_by', 'mode', 'nth_value', 'ntile', 'percent_rank',
  'product', 'quantile', 'quantile_cont', 'quantile_disc', 'rank', 'rank_dense', 'regr_avgx', 'regr_avgy',
  'regr_count', 'regr_intercept', 'regr_r2', 'regr_slope', 'regr_sxx', 'regr_sxy', 'regr_syy',
  'reservoir_quantile', 'row_number', 'sem', 'skewness', 'stddev', 'stddev_pop', 'stddev_samp', 'string_agg',
  'sum', 'sum_no_overflow', 'sumkahan', 'var_pop', 'var_samp', 'variance',
] as const;

/** Table functions that generate rows from their arguments only. */
const TABLE_FUNCTIONS = ['range', 'generate_series', 'unnest', 'json_each', 'json_tree'] as const;

/**
 * `information_schema` views that show only the tables and columns a query can read anyway
 * (checked against a sandbox: they list the service tables, the caller's sheets and schema names,
 * no paths). `views` is left out: it lists the engine's internal views and their SQL.
 */
const INFORMATION_SCHEMA_VIEWS = [
  'tables', 'columns', 'schemata', 'table_constraints', 'key_column_usage', 'check_constraints',
  'referential_constraints', 'constraint_column_usage', 'constraint_table_usage', 'character_sets',
] as const;

/** `SHOW …` forms without a query: the tables and database names of the sandbox. */
const SHOW_TARGETS = ['tables', 'databases', '__show_tables_expanded'] as const;

const ALLOWED_FUNCTIONS: ReadonlySet<string> = new Set([...SCALAR, ...MACROS, ...AGGREGATES]);
const ALLOWED_TABLE_FUNCTIONS: ReadonlySet<string> = new Set(TABLE_FUNCTIONS);
const ALLOWED_INFORMATION_SCHEMA: ReadonlySet<string> = new Set(INFORMATION_SCHEMA_VIEWS);
const ALLOWED_SHOW: ReadonlySet<string> = new Set(SHOW_TARGETS);

export const isAllowedFunction = (name: string): boolean => ALLOWED_FUNCTIONS.has(name.toLowerCase());
export const isAllowedTableFunction = (name: string): boolean => ALLOWED_TABLE_FUNCTIONS.has(name.toLowerCase());
export const isAllowedInformationSchemaView = (name: string): boolean => ALLOWED_INFORMATION_SCHEMA.has(name.toLowerCase());
export const isAllowedShow = (name: string): boolean => ALLOWED_SHOW.has(name.toLowerCase());

/** For the escape corpus: every name the lists allow. */
export const allowedFunctionNames = (): string[] => [...ALLOWED_FUNCTIONS];
export const allowedTableFunctionNames = (): string[] => [...ALLOWED_TABLE_FUNCTIONS];
