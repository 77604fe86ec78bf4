import { describe, expect, it } from '@jest/globals';
import { formatOf } from './formats.ts';
import { slugFrom, slugProblem, sqlNameOf } from './names.ts';

describe('sheet names', () => {
  it('accepts URL-safe slugs and refuses others and UUIDs', () => {
    expect(slugProblem('sales-2024_q1')).toBeUndefined();
    expect(slugProblem('2024')).toBeUndefined();
    for (const bad of ['', 'Sales', '-x', 'a b', 'a/b', 'x'.repeat(64)]) expect(slugProblem(bad)).toMatch(/slug must be/);
    expect(slugProblem('0b6e9c1e-5f4a-4c1b-9d9e-1f2a3b4c5d6e')).toBe('The slug must not be a UUID.');
  });

  it('derives slugs from names and file names', () => {
    expect(slugFrom('My Sales (2024).csv')).toBe('my-sales-2024');
    expect(slugFrom('€€€')).toBe('sheet');
  });

  it('makes runner-safe SQL names', () => {
    expect(sqlNameOf('my-sales')).toBe('my_sales');
    expect(sqlNameOf('2024-q1')).toBe('t_2024_q1');
    expect(sqlNameOf('9'.repeat(63))).toHaveLength(63);
  });

  it('detects the format by extension, then content type', () => {
    expect(formatOf('a.CSV', 'application/octet-stream')).toBe('csv');
    expect(formatOf('a.jsonl', '')).toBe('ndjson');
    expect(formatOf('upload', 'text/tab-separated-values; charset=utf-8')).toBe('tsv');
    expect(formatOf('a.xlsx', 'application/vnd.ms-excel')).toBeUndefined();
  });
});
