/**
 * DuckDB values as JSON. The library's JSON converter writes every BIGINT as a string to keep
 * precision; `count(*)` and `range()` are BIGINT, so users would see `"5"`. Integers that fit a
 * JavaScript number become numbers; larger ones stay strings so no digit is lost.
 */
import { JsonDuckDBValueConverter } from '@duckdb/node-api';
import type { DuckDBValueConverter, Json } from '@duckdb/node-api';

export const jsonValue: DuckDBValueConverter<Json> = (value, type, converter) => {
  if (typeof value === 'bigint' && value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)) {
    return Number(value);
  }
  return JsonDuckDBValueConverter(value, type, converter);
};
